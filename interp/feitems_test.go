package interp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestIndexItems: every item of a JSON list, whatever its shape and the
// white space around it, reads back as decoding the whole list gives it,
// past several marks; anything but a list is refused.
func TestIndexItems(t *testing.T) {
	lists := []string{
		`[]`, ` [ ] `, `[1]`, `[ -1.5e3 , true,false , null ]`,
		`["a\"]b", "\\", "[{,", "é\u00e9\n", ""]`,
		`[{"a":[1,{"b":"]}"}],"c":{}}, [[],[[]]], {"k\"":"v,"}]`,
		"[\n\t1,\r\n\t\"x\"\n]",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var many []any
	for i := range 5*feStride + 3 {
		switch rng.IntN(4) {
		case 0:
			many = append(many, float64(i))
		case 1:
			many = append(many, strings.Repeat(`"],`, rng.IntN(3))+fmt.Sprint(i))
		case 2:
			many = append(many, map[string]any{"i": float64(i), "l": []any{"[", "{"}})
		default:
			many = append(many, []any{float64(i), nil})
		}
	}
	compact := mustJSON(many)
	var indented bytes.Buffer
	if err := json.Indent(&indented, compact, " ", "  "); err != nil {
		t.Fatal(err)
	}
	lists = append(lists, string(compact), indented.String())
	for _, l := range lists {
		var want []any
		if err := json.Unmarshal([]byte(l), &want); err != nil {
			t.Fatalf("bad case %s: %v", l, err)
		}
		it, err := indexItems(json.RawMessage(l))
		if err != nil {
			t.Fatalf("indexItems(%.60s): %v", l, err)
		}
		if it.len() != len(want) {
			t.Fatalf("indexItems(%.60s) has %d items, want %d", l, it.len(), len(want))
		}
		for i := len(want) - 1; i >= 0; i-- { // backwards: no reliance on a scan's order
			if got := it.at(i); !reflect.DeepEqual(got, want[i]) {
				t.Fatalf("item %d of %.60s = %#v (raw %s), want %#v", i, l, got, it.rawAt(i), want[i])
			}
		}
	}
	for _, bad := range []string{``, `{}`, `"x"`, `[1,`, `[1 2]`, `["a]`, `[{"a":1]`} {
		if _, err := indexItems(json.RawMessage(bad)); err == nil {
			t.Errorf("indexItems(%s) took it as a list", bad)
		}
	}
}

// TestJSONField: a member of a JSON object is found without decoding it,
// its key compared as decoded; the last of duplicate keys wins, as when
// decoding; a member of a nested object is not one of the object's.
func TestJSONField(t *testing.T) {
	cases := []struct{ obj, key, want string }{
		{`{"a":1,"items":[1,2],"b":{"items":3}}`, "items", `[1,2]`},
		{` { "b" : {"items":3} , "items" : [ 5 ] } `, "items", `[ 5 ]`},
		{`{"it\u0065ms":[5]}`, "items", `[5]`},
		{`{"items":[1],"items":[2]}`, "items", `[2]`},
		{`{"x":"\"items\":[9]"}`, "items", ``},
		{`{"b":{"items":3}}`, "items", ``},
		{`[{"items":1}]`, "items", ``},
		{``, "items", ``},
	}
	for _, c := range cases {
		got, ok := jsonField(json.RawMessage(c.obj), c.key)
		if string(got) != c.want || ok != (c.want != "") {
			t.Errorf("jsonField(%s, %q) = %s, %v; want %s", c.obj, c.key, got, ok, c.want)
		}
	}
}

// TestInputRef: only an items expression that is exactly input.NAME is
// taken from the stored inputs.
func TestInputRef(t *testing.T) {
	for cel, want := range map[string]string{
		"input.items": "items", "input._x9": "_x9",
		"input.items[0]": "", "input.a.b": "", "inputs.x": "", "input.": "", "input.9a": "",
		"input.items.map(x, x)": "", "[input.items]": "",
	} {
		got, ok := inputRef(cel)
		if got != want || ok != (want != "") {
			t.Errorf("inputRef(%q) = %q, %v; want %q", cel, got, ok, want)
		}
	}
}

// runForeach runs the first workflow of src to its end with a runner of
// its own and returns the runner (to look at what it held) and the run.
func runForeach(t *testing.T, b *bundle, src string, inputs map[string]any) (*runner, store.Run) {
	t.Helper()
	gs := b.compile(src)
	run := b.start(gs[0].Workflow, inputs)
	owner := "testhost/1/t"
	claimed, err := b.st.RunClaim(b.ctx, store.RunClaimParams{Owner: owner, Now: b.clk.Now(), LeaseFor: 3600e9, Limit: 1, RunID: run.ID})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	r := b.e.newRunner(claimed[0], owner)
	done, err := r.main(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, done, store.RunCompleted)
	return r, done
}

// stepState is the stored State of a run's step key.
func stepState(t *testing.T, b *bundle, runID, key string) string {
	t.Helper()
	row, err := b.st.StepGet(b.ctx, runID, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(row.State)
}

// TestForeachItemsFromInputHeldOnce: a foreach whose items are exactly a
// run input's list records the input's name, not a second copy of the
// list, and the runner never decodes the inputs (nothing else read them);
// every item still runs with its value, and show lists each item's value.
// Before, the list was stored again in the step's State and held decoded
// three times (the inputs, their CEL conversion, the recorded items).
func TestForeachItemsFromInputHeldOnce(t *testing.T) {
	b := setup(t)
	items := make([]any, 300)
	for i := range items {
		items[i] = map[string]any{"n": i, "s": fmt.Sprintf("x]\"%d", i)}
	}
	r, run := runForeach(t, b, `
workflow "fe" {
  version = "1.0.0"
  input "items" { type = list(object({ n = number, s = string })) }
  limits { attempts = 10000 }
  step "each" {
    foreach {
      items       = "input.items"
      concurrency = 4
    }
    set { v = "{{ item.s + ':' + string(item.n * 2) }}" }
  }
}`, map[string]any{"items": items})
	if st := stepState(t, b, run.ID, "each"); st != `{"items_input":"items"}` {
		t.Fatalf("the foreach's State = %.200s, want only the input's name", st)
	}
	if r.inputs != nil {
		t.Fatal("the runner decoded the run's inputs, which no expression read")
	}
	v := b.show(run.ID).Steps["each"]
	out, _ := jsonOf(t, v.Output).([]any)
	if len(out) != 300 || len(v.Items) != 300 {
		t.Fatalf("%d outputs, %d items shown; want 300", len(out), len(v.Items))
	}
	for i, o := range out {
		if want := fmt.Sprintf("map[v:x]\"%d:%d]", i, 2*i); fmt.Sprint(o) != want {
			t.Fatalf("output %d = %v, want %s", i, o, want)
		}
		wantJSON(t, fmt.Sprintf("item %d", i), v.Items[i].Item, string(mustJSON(items[i])))
	}
}

// TestForeachItemsReadInput: a foreach body that reads the inputs as well
// as its item gets them (decoded when first read), and items computed by
// an expression are recorded as their JSON, held once: the runner's
// decoded State does not keep a second copy.
func TestForeachItemsReadInput(t *testing.T) {
	b := setup(t)
	r, run := runForeach(t, b, `
workflow "fe" {
  version = "1.0.0"
  input "items" { type = list(number) }
  input "k" {
    type    = number
    default = 100
  }
  step "each" {
    foreach {
      items       = "input.items.map(x, x + 1)"
      concurrency = 2
    }
    set { v = "{{ item + input.k + input.items[index] }}" }
  }
}`, map[string]any{"items": []any{1, 2, 3}})
	if st := stepState(t, b, run.ID, "each"); st != `{"items":[2,3,4]}` {
		t.Fatalf("the foreach's State = %s, want its items", st)
	}
	if st := r.states["each"]; st != nil && len(st.Items) > 0 {
		t.Fatalf("the runner holds the items a second time, decoded from the State: %s", st.Items)
	}
	wantJSON(t, "each", b.show(run.ID).Steps["each"].Output, `[{"v": 103}, {"v": 105}, {"v": 107}]`)
}

// TestForeachInputItemsWithSecret: items that are an input's list holding
// a secret are recorded redacted, as any other items: show never prints
// the secret as an item's value.
func TestForeachInputItemsWithSecret(t *testing.T) {
	b := setup(t)
	b.env["TOK"] = "sekretvalue1"
	_, run := runForeach(t, b, `
workflow "fe" {
  version = "1.0.0"
  secret "tok" { env = "TOK" }
  input "items" { type = list(string) }
  step "each" {
    foreach { items = "input.items" }
    set { v = "{{ item }}" }
  }
}`, map[string]any{"items": []any{"a", "sekretvalue1"}})
	v := b.show(run.ID).Steps["each"]
	if len(v.Items) != 2 {
		t.Fatalf("%d items shown, want 2", len(v.Items))
	}
	wantJSON(t, "item 1", v.Items[1].Item, `"***"`)
	wantJSON(t, "each", v.Output, `[{"v": "a"}, {"v": "***"}]`)
}

// TestForeachOutputGrowth: the buffer of a foreach's output ends about as
// long as the output (doubling alone can leave it twice as long), and a
// projection from a large first output never grows it more than twice.
func TestForeachOutputGrowth(t *testing.T) {
	c := &feCursor{items: &feItems{n: 100000}}
	addOut(c, "[")
	for i := range c.items.n {
		if i > 0 {
			addOut(c, ",")
		}
		addOut(c, fmt.Sprintf(`{"v":%d}`, 2*i))
		c.done++
	}
	addOut(c, "]")
	if float64(cap(c.out)) > 1.2*float64(len(c.out)) {
		t.Fatalf("the output's buffer holds %d bytes for an output of %d", cap(c.out), len(c.out))
	}
	c = &feCursor{items: &feItems{n: 1000000}}
	addOut(c, "[")
	addOut(c, strings.Repeat("x", 1<<20))
	c.done++
	addOut(c, ",1")
	if cap(c.out) > 2*(1<<20+2) {
		t.Fatalf("after one large output the buffer grew to %d bytes", cap(c.out))
	}
}
