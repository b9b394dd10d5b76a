package expr

import (
	"strings"
	"testing"
)

func TestFunctions(t *testing.T) {
	fs, err := Functions()
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Function{}
	for _, f := range fs {
		by[f.Name] = f
		if strings.HasPrefix(f.Name, "_") || strings.Contains(f.Name, "@") {
			t.Errorf("operator or internal name listed: %q", f.Name)
		}
	}
	for _, want := range []string{"size", "int", "string", "trim", "split", "url.pathEscape", "url.queryEscape", "url.raw", "base64.encode"} {
		if _, ok := by[want]; !ok {
			t.Errorf("function %q missing", want)
		}
	}
	if sigs := strings.Join(by["size"].Signatures, "; "); !strings.Contains(sigs, "string.size() -> int") {
		t.Errorf("size signatures: %s", sigs)
	}
}
