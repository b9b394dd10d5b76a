package stepgen

import (
	"strings"
	"testing"
)

func src(fields string) []byte {
	return []byte("package graph\n\ntype Step struct {\n" + fields + "\n}\n")
}

// TestGenerateRejects: a field the tags do not fully describe stops the
// generator with a message naming the field.
func TestGenerateRejects(t *testing.T) {
	cases := map[string]string{
		"Name string `json:\"name\"`":                                  "Step.Name has no graph tag",
		"Name string `json:\"name\" graph:\"def\"`":                    "needs def, run or self, and diff=",
		"Name string `json:\"name\" graph:\"diff=-\"`":                 "needs def, run or self, and diff=",
		"Name string `json:\"name\" graph:\"def,often,diff=-\"`":       `unknown graph tag option "often"`,
		"Name string `json:\"name\" graph:\"def,diff=huge:name\"`":     "diff=huge:name is not a diff spec",
		"Name string `json:\"name\" graph:\"def,diff=cel:major\"`":     "diff=cel:major is not a diff spec",
		"Name string `json:\"name\" graph:\"def,diff=or:patch:name\"`": "diff=or:patch:name is not a diff spec",
		"Name float32 `json:\"name\" graph:\"def,diff=-\"`":            "no decoder for type float32",
		"Name string": "Step.Name has no tags",
	}
	for field, want := range cases {
		_, err := Generate(src(field))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v; want one containing %q", field, err, want)
		}
	}
	if _, err := Generate([]byte("package graph\n")); err == nil || !strings.Contains(err.Error(), "no struct Step") {
		t.Errorf("no Step: error %v", err)
	}
}

// TestGenerateField: one field's tags become its place in the hash, its
// decoder, its walks and its comparison.
func TestGenerateField(t *testing.T) {
	out, err := Generate(src("Name string `json:\"name\" graph:\"def,diff=-\"`\n" +
		"Mode string `json:\"mode\" graph:\"def,mode,diff=major:mode\"`\n" +
		"Wait int64 `json:\"wait_ms,omitempty\" graph:\"run,diff=ms:patch:wait\"`\n" +
		"Tags []string `json:\"tags,omitempty\" graph:\"def,set,diff=same:minor:tags\"`\n" +
		"internal int"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(strings.Fields(string(out)), " ") // gofmt aligns fields
	for _, want := range []string{
		"Name string `json:\"name\"`",
		"Mode string `json:\"mode\"`",
		"Tags []string `json:\"tags,omitempty\"`",
		"return stepDef{s.Name, s.Mode, s.Tags}",
		"s.Mode = d.mode()",
		"s.Wait = d.int64()",
		"d.norm.names(&s.Tags, false)",
		"n.names(&s.Tags, false)",
		"s.Mode = modeString(s.Mode)",
		`d.add(path, BumpMajor, "mode changed (%s → %s)", o.Mode, n.Mode)`,
		`d.add(path, BumpPatch, "wait changed (%s → %s)", diffMS(o.Wait), diffMS(n.Wait))`,
		`d.add(path, BumpMinor, "tags changed")`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the generated code lacks %q", want)
		}
	}
	if strings.Contains(s, "Wait int64 `json") {
		t.Error("a run field is in the hash's view of a step")
	}
	if strings.Contains(s, "s.internal") {
		t.Error("an unexported field is described")
	}
}
