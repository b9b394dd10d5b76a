package graph

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var irUpdateGolden = flag.Bool("update-render", false, "rewrite lang/graph/testdata/render golden files")

func TestRenderGolden(t *testing.T) {
	g := irFull(t)
	// A label that needs escaping in both formats.
	irFind(t, g, "reject").When = irExpr(`steps.approve.output.by == "ops" && steps.approve.output.n < 3`, TypeBool)
	Seal(g)
	for _, tc := range []struct {
		file string
		out  string
	}{
		{"full.mmd", Mermaid(g)},
		{"full.dot", DOT(g)},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "render", tc.file)
			if *irUpdateGolden {
				if err := os.WriteFile(path, []byte(tc.out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./lang/graph -run TestRenderGolden -update-render to create it)", err)
			}
			if string(want) != tc.out {
				t.Fatalf("%s differs from the golden file; got:\n%s", tc.file, tc.out)
			}
		})
	}
}

func TestRenderDeterministicAndEdges(t *testing.T) {
	a, b := irShip(t), irShip(t)
	b.Steps[0], b.Steps[6] = b.Steps[6], b.Steps[0]
	Seal(b)
	if Mermaid(a) != Mermaid(b) || DOT(a) != DOT(b) {
		t.Fatal("rendering depends on how the graph was built")
	}
	m := Mermaid(a)
	for _, want := range []string{
		`["route (switch)"]`,
		`-->|"input.express"|`,
		`-->|"default"|`,
		`-.->`, // depends_on
		`foreach: ['box-1', 'box-2']`,
		`until: steps.poll.output.json.state == 'done'`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("Mermaid output lacks %q:\n%s", want, m)
		}
	}
	d := DOT(a)
	for _, want := range []string{
		`"charge" -> "route" [style=dashed];`,
		`"route" -> "ship_express" [label="input.express"];`,
		`"route" -> "ship_standard" [label="default"];`,
		`"price" -> "charge";`,
		`peripheries=2`,
	} {
		if !strings.Contains(d, want) {
			t.Errorf("DOT output lacks %q:\n%s", want, d)
		}
	}
}
