package testfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
)

// Upgrades loads the workflow files an upgrade block names; the CLI passes
// lang.LoadPaths (with its options). Its diagnostics name the upgrade
// file's own lines.
type Upgrades func(path string) (*lang.Module, hcl.Diagnostics)

// Check checks every test of f against mod, the workflows of the test
// file's directory. dir is the test file's directory (upgrade files are
// relative to it); load loads an upgrade file (nil: lang.LoadPaths). It
// sets each test's Graph, each upgrade's Graph and Path and each
// assertion's Expr and Graph. Upgrade files' modules are added to
// files, for diagnostics.
func Check(f *File, mod *lang.Module, dir string, load Upgrades, files map[string]*hcl.File) hcl.Diagnostics {
	if load == nil {
		load = func(p string) (*lang.Module, hcl.Diagnostics) { return lang.LoadPaths([]string{p}) }
	}
	var diags hcl.Diagnostics
	for _, t := range f.Tests {
		diags = append(diags, checkTest(t, f, mod, dir, load, files)...)
	}
	return diags
}

// Sorted puts the diagnostics of Parse and Check in file and position
// order (language.md §16), whichever stage found each; those without a
// place come first.
func Sorted(diags hcl.Diagnostics) hcl.Diagnostics {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		if a == nil || b == nil {
			return a == nil && b != nil
		}
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
	return diags
}

func checkTest(t *Test, f *File, mod *lang.Module, dir string, load Upgrades, files map[string]*hcl.File) hcl.Diagnostics {
	var names []string
	for _, w := range mod.Workflows {
		names = append(names, w.Name)
	}
	sort.Strings(names)
	var w *lang.Workflow
	switch {
	case t.WorkflowName != "":
		w = mod.Workflow(t.WorkflowName)
		if w == nil {
			return hcl.Diagnostics{errAt(t.WorkflowRng, "Unknown workflow", "No workflow named %q is defined beside %s; the directory defines %s.%s",
				t.WorkflowName, f.Name, quoteAll(names), naming.DidYouMean(t.WorkflowName, names))}
		}
	case len(mod.Workflows) == 1:
		w = mod.Workflows[0]
	case mod.Workflow(fileWorkflow(f.Name)) != nil:
		w = mod.Workflow(fileWorkflow(f.Name))
	default:
		return hcl.Diagnostics{errAt(t.Range, "Missing workflow", "The directory defines %d workflows (%s) and none is named after the file: name the one test %q tests with workflow = \"NAME\".", len(names), quoteAll(names), t.Name)}
	}
	if w.Graph == nil {
		return hcl.Diagnostics{errAt(t.Range, "Invalid workflow", "Workflow %q has errors (reported above); fix them to run its tests.", w.Name)}
	}
	g := w.Graph
	t.Graph = g
	var diags hcl.Diagnostics
	diags = append(diags, checkInputs(t, g)...)
	if t.Upgrade != nil {
		diags = append(diags, checkUpgrade(t.Upgrade, g, dir, load, files)...)
	}
	for _, m := range t.Mocks {
		diags = append(diags, checkMock(m, g, t.Upgrade)...)
	}
	var signals []string
	dataType := map[string]*graph.Type{} // the typed wait steps' data types
	for _, s := range g.Steps {
		if s.Action.Kind == graph.KindWait {
			signals = append(signals, s.Action.Wait.Signal)
			if s.Action.Wait.Type != nil {
				dataType[s.Action.Wait.Signal] = s.Action.Wait.Type
			}
		}
	}
	for _, s := range t.Signals {
		if ty := dataType[s.Name]; ty != nil {
			if err := Conform(s.Data, ty, "data", false); err != nil {
				diags = append(diags, errAt(s.Range, "Signal data does not match the wait step", "The wait step that takes %q declares its data as %s: %s", s.Name, ty, sentence(err)))
			}
		}
		if !contains(signals, s.Name) {
			hint := "It has no wait step."
			if len(signals) > 0 {
				hint = fmt.Sprintf("Its wait steps take %s.%s", quoteAll(signals), naming.DidYouMean(s.Name, signals))
			}
			diags = append(diags, errAt(s.Range, "No step waits for this signal", "No wait step of workflow %q takes the signal %q, so the run would never read it. %s", g.Workflow, s.Name, hint))
		}
	}
	if t.Expect != nil {
		diags = append(diags, checkExpect(t, g)...)
	}
	return diags
}

// fileWorkflow is the workflow a test file is named after: deploy for
// deploy.test.hcl.
func fileWorkflow(name string) string {
	return strings.TrimSuffix(filepath.Base(name), lang.TestFileSuffix)
}

func checkInputs(t *Test, g *graph.Graph) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var names []string
	types := map[string]*graph.Type{}
	for _, in := range g.Inputs {
		names = append(names, in.Name)
		types[in.Name] = in.Type
	}
	rng := t.InputsRng
	if rng.Filename == "" {
		rng = t.Range
	}
	for _, k := range sortedKeys(t.Inputs) {
		rng := rng
		if r, ok := t.InputRngs[k]; ok {
			rng = r // at the input's own key = value
		}
		ty, ok := types[k]
		if !ok {
			diags = append(diags, errAt(rng, "Unknown input", "Workflow %q declares no input %q; it declares %s.%s", g.Workflow, k, quoteAll(names), naming.DidYouMean(k, names)))
			continue
		}
		if err := Conform(t.Inputs[k], ty, "inputs."+k, false); err != nil {
			diags = append(diags, errAt(rng, "Invalid input", "%s", sentence(err)))
		}
	}
	for _, in := range g.Inputs {
		if _, ok := t.Inputs[in.Name]; !ok && in.Default == nil {
			diags = append(diags, errAt(rng, "Missing input", "Workflow %q requires the input %q (%s), which has no default: set it in inputs = { %s = ... }.", g.Workflow, in.Name, in.Type, in.Name))
		}
	}
	return diags
}

// Mockable are the action kinds a mock may replace: those with effects
// outside the run.
var Mockable = []string{graph.KindExec, graph.KindHTTP, graph.KindWait, graph.KindWorkflow}

// MockedStep is the step a mock replaces: the tested version's step of
// that name, else (a step the upgrade adds) the upgrade version's.
func MockedStep(t *Test, name string) *graph.Step {
	for _, g := range []*graph.Graph{t.Graph, upgradeGraph(t.Upgrade)} {
		if g == nil {
			continue
		}
		if i, ok := g.StepIndex(name); ok {
			return g.Steps[i]
		}
	}
	return nil
}

func upgradeGraph(u *Upgrade) *graph.Graph {
	if u == nil {
		return nil
	}
	return u.Graph
}

func checkMock(m *Mock, g *graph.Graph, u *Upgrade) hcl.Diagnostics {
	var step *graph.Step
	var names []string
	for _, gg := range []*graph.Graph{g, upgradeGraph(u)} {
		if gg == nil {
			continue
		}
		for _, s := range gg.Steps {
			if !contains(names, s.Name) {
				names = append(names, s.Name)
			}
			if s.Name == m.Step && step == nil {
				step = s
			}
			if c := s.Compensate; c != nil && s.Name+CompensateSuffix == m.Step && step == nil {
				step = &graph.Step{Name: m.Step, Action: c.Action, OutputType: graph.TypeAny}
			}
		}
	}
	if step == nil {
		sort.Strings(names)
		return hcl.Diagnostics{errAt(m.Range, "Unknown step", "Workflow %q has no step named %q.%s", g.Workflow, m.Step, naming.DidYouMean(m.Step, names))}
	}
	if !contains(Mockable, step.Action.Kind) {
		kind := step.Action.Kind
		if kind == "" {
			kind = "no action"
		}
		return hcl.Diagnostics{errAt(m.Range, "Step cannot be mocked", "Step %q has a %s action, which has no effect outside the run; a mock replaces an exec, http, wait or workflow action. Mock the steps it reads instead.", m.Step, kind)}
	}
	var diags hcl.Diagnostics
	for _, r := range m.Results {
		if r.Error == nil || r.Output != nil {
			ty := graph.StepOutput(step)
			if err := Conform(r.Output, ty, "output", true); err != nil {
				what := fmt.Sprintf("The output of step %q is %s", m.Step, ty)
				switch {
				case step.Foreach != nil && step.Until != nil:
					what = fmt.Sprintf("A mock of step %q gives one iteration of one foreach item, of type %s", m.Step, ty)
				case step.Foreach != nil:
					what = fmt.Sprintf("A mock of step %q gives one foreach item's output, of type %s (the step's output is the list of them)", m.Step, ty)
				case step.Until != nil:
					what = fmt.Sprintf("A mock of step %q gives one iteration's output, of type %s", m.Step, ty)
				}
				diags = append(diags, errAt(r.Range, "Mock output does not match the step", "%s: %s", what, sentence(err)))
			}
		}
		if r.Error != nil && (step.Action.Kind == graph.KindWait) {
			diags = append(diags, errAt(r.Range, "Invalid mock error", "A wait step does not fail with an error of its own; its mock gives the signal's data as output."))
		}
	}
	return diags
}

func checkUpgrade(u *Upgrade, g *graph.Graph, dir string, load Upgrades, files map[string]*hcl.File) hcl.Diagnostics {
	if u.File == "" {
		return nil
	}
	if d := confineUpgrade(u, dir); d != nil {
		return hcl.Diagnostics{d}
	}
	u.Path = filepath.Join(dir, filepath.FromSlash(u.File))
	if lang.IsTestFile(u.Path) {
		return hcl.Diagnostics{errAt(u.FileRng, "Invalid upgrade file", "%s is a test file; name a workflow file with the new version.", u.File)}
	}
	if filepath.Clean(filepath.Dir(u.Path)) == filepath.Clean(dir) {
		return hcl.Diagnostics{errAt(u.FileRng, "Upgrade file beside the workflows", "%s is in the test's own directory, where loading the directory would see two definitions of %q. Move it to a sub-directory, such as testdata/.", u.File, g.Workflow)}
	}
	mod, diags := load(u.Path)
	if mod != nil {
		for k, v := range mod.Files {
			files[k] = v
		}
	}
	if diags.HasErrors() {
		return append(diags, errAt(u.FileRng, "Invalid upgrade file", "%s does not compile (see above).", u.File))
	}
	w := mod.Workflow(g.Workflow)
	if w == nil || w.Graph == nil {
		return append(diags, errAt(u.FileRng, "Invalid upgrade file", "%s defines no workflow %q to upgrade to.", u.File, g.Workflow))
	}
	u.Graph = w.Graph
	return diags
}

// upgradeFix is how to name an upgrade file a test may read.
const upgradeFix = "Copy the workflow file into a sub-directory of the test file's directory, such as testdata/, and name it relative to the test file: file = \"testdata/NAME.hcl\"."

// confineUpgrade refuses an upgrade file a test may not read (testing.md
// §5): one that is not a .hcl file, or is not in the directory tree of the
// test file, by an absolute path, by .. or by a symbolic link that leads
// out of it. The file is opened through an os.Root on dir, so a link is
// followed only while it stays inside. The diagnostic names the path and
// never quotes the file. A file that does not exist is left to the load,
// which says so.
func confineUpgrade(u *Upgrade, dir string) *hcl.Diagnostic {
	name := filepath.FromSlash(u.File)
	const outside = "Upgrade file outside the test's directory"
	if !filepath.IsLocal(name) {
		why := "it climbs out of it with \"..\""
		if filepath.IsAbs(name) || strings.HasPrefix(u.File, "/") {
			why = "it is an absolute path"
		}
		return errAt(u.FileRng, outside, "A test reads only files in the directory tree of its test file (%s); %q is not there: %s. %s", dirText(dir), u.File, why, upgradeFix)
	}
	if !strings.HasSuffix(name, ".hcl") {
		return errAt(u.FileRng, "Invalid upgrade file", "%q is not a workflow file (.hcl); a test reads no other file. %s", u.File, upgradeFix)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return errAt(u.FileRng, "Invalid upgrade file", "Opening the test file's directory %s failed: %v.", dirText(dir), err)
	}
	defer root.Close()
	st, err := root.Stat(name)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return errAt(u.FileRng, "Invalid upgrade file", "%q is not a regular file. %s", u.File, upgradeFix)
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case isEscape(err):
		return errAt(u.FileRng, outside, "A test reads only files in the directory tree of its test file (%s); %q is not there: a symbolic link on its path leads out of it. %s", dirText(dir), u.File, upgradeFix)
	}
	return errAt(u.FileRng, "Invalid upgrade file", "Reading %q failed: %v.", u.File, err)
}

// isEscape reports whether err is os.Root's refusal of a path that leads
// out of the root (the error has no exported value).
func isEscape(err error) bool {
	return strings.Contains(err.Error(), "path escapes from parent")
}

func dirText(dir string) string {
	if dir == "" || dir == "." {
		return "the current directory"
	}
	return dir
}

func checkExpect(t *Test, g *graph.Graph) hcl.Diagnostics {
	var diags hcl.Diagnostics
	e := t.Expect
	outs := map[string]*graph.Type{}
	var outNames []string
	for _, o := range g.Outputs {
		outs[o.Name] = o.Type
		outNames = append(outNames, o.Name)
	}
	for _, w := range e.Outputs {
		ty, ok := outs[w.Name]
		if !ok {
			hint := "It declares no output."
			if len(outNames) > 0 {
				hint = fmt.Sprintf("It declares %s.%s", quoteAll(outNames), naming.DidYouMean(w.Name, outNames))
			}
			diags = append(diags, errAt(w.Range, "Unknown output", "Workflow %q declares no output %q. %s", g.Workflow, w.Name, hint))
			continue
		}
		if err := Conform(w.Value, ty, "outputs."+w.Name, false); err != nil {
			diags = append(diags, errAt(w.Range, "Invalid expected output", "%s", sentence(err)))
		}
	}
	steps := map[string]*graph.Step{}
	var stepNames []string
	for _, s := range g.Steps {
		steps[s.Name] = s
		stepNames = append(stepNames, s.Name)
	}
	// A run that an upgrade moved (new or migrate) may end on the other
	// version: its steps can be expected too, as they can be mocked.
	if u := t.Upgrade; u != nil && u.Graph != nil && u.Choose != "old" {
		for _, s := range u.Graph.Steps {
			if steps[s.Name] == nil {
				steps[s.Name] = s
				stepNames = append(stepNames, s.Name)
			}
		}
	}
	sort.Strings(stepNames)
	for _, s := range g.Steps {
		if s.Compensate != nil {
			steps[s.Name+CompensateSuffix] = &graph.Step{Name: s.Name + CompensateSuffix, OutputType: graph.TypeAny}
		}
	}
	for _, c := range e.Compensated {
		if s := steps[c.Name]; s == nil || s.Compensate == nil {
			diags = append(diags, errAt(c.Range, "Not a compensated step",
				"compensated lists the steps whose compensate block ran, in the order they ran; workflow %q has no step %q with a compensate block.", g.Workflow, c.Name))
		}
	}
	for _, sw := range e.Steps {
		s := steps[sw.Step]
		if s == nil {
			diags = append(diags, errAt(sw.Range, "Unknown step", "Workflow %q has no step named %q.%s", g.Workflow, sw.Step, naming.DidYouMean(sw.Step, stepNames)))
			continue
		}
		if sw.HasOut {
			if err := Conform(sw.Output, expr.VisibleOutput(s), "steps."+sw.Step+".output", false); err != nil {
				diags = append(diags, errAt(sw.Range, "Invalid expected output", "%s", sentence(err)))
			}
		}
	}
	mocked := map[string]bool{}
	var mockNames []string // the valid mocks, for a suggestion
	for _, m := range t.Mocks {
		mocked[m.Step] = true
		if steps[m.Step] != nil || upgradeHas(t.Upgrade, m.Step) {
			mockNames = append(mockNames, m.Step)
		}
	}
	for _, c := range e.Calls {
		if !mocked[c.Name] {
			hint := "The test mocks no step."
			if len(mockNames) > 0 {
				hint = fmt.Sprintf("It mocks %s.%s", quoteAll(mockNames), naming.DidYouMean(c.Name, mockNames))
			}
			diags = append(diags, errAt(c.Range, "Calls of a step that is not mocked", "calls counts the calls of a mock, and test %q does not mock step %q. %s", t.Name, c.Name, hint))
		}
	}
	for _, a := range e.Asserts {
		diags = append(diags, checkAssert(a, g)...)
	}
	return diags
}

// checkAssert compiles an assertion as a bool in the scope of the
// workflow's outputs: input, run and every step as steps.NAME.
func checkAssert(a *Assert, g *graph.Graph) hcl.Diagnostics {
	p, diags := expr.ParseExpr(a.Src, a.Range)
	if diags.HasErrors() || p == nil {
		return diags
	}
	sc := expr.GraphScope(g, expr.SlotOutput)
	sc.Where = "assert"
	var names []string
	for _, s := range g.Steps {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	sc.Declared = names
	e, d := expr.CheckExpr(p, sc, graph.TypeBool)
	diags = append(diags, d...)
	if d.HasErrors() || e == nil {
		return diags
	}
	a.Expr = e
	a.Graph = &graph.Graph{
		Workflow: g.Workflow, Version: g.Version, Inputs: g.Inputs, Limits: g.Limits, Steps: g.Steps,
		Outputs: []graph.Output{{Name: "assert", Type: graph.TypeBool, Value: &graph.Value{
			Template: &graph.Template{Parts: []graph.TemplatePart{{Expr: e}}}, Type: graph.TypeBool}}},
	}
	return diags
}

// Conform checks that a literal value is a value of type t. partial lets
// an object leave fields out (a mock's output: the missing fields are
// filled with their zero values, Fill). null stands for anything.
func Conform(v any, t *graph.Type, path string, partial bool) error {
	if v == nil || t == nil || t.Kind == graph.KindAny {
		return nil
	}
	bad := func() error {
		return fmt.Errorf("%s is %s, but its type is %s", path, describe(v), t)
	}
	switch t.Kind {
	case graph.KindString:
		if _, ok := v.(string); !ok {
			return bad()
		}
	case graph.KindNumber:
		if _, ok := v.(json.Number); !ok {
			return bad()
		}
	case graph.KindInt:
		if _, ok := asInt(v); !ok {
			return bad()
		}
	case graph.KindBool:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case graph.KindNull:
		return bad()
	case graph.KindList:
		l, ok := v.([]any)
		if !ok {
			return bad()
		}
		for i, e := range l {
			if err := Conform(e, t.Elem, fmt.Sprintf("%s[%d]", path, i), partial); err != nil {
				return err
			}
		}
	case graph.KindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for _, k := range sortedKeys(m) {
			if err := Conform(m[k], t.Elem, path+"."+k, partial); err != nil {
				return err
			}
		}
	case graph.KindObject:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		var fields []string
		for k := range t.Fields {
			fields = append(fields, k)
		}
		sort.Strings(fields)
		for _, k := range sortedKeys(m) {
			ft, ok := t.Fields[k]
			if !ok {
				return fmt.Errorf("%s has the field %q, which is not part of %s (its fields are %s).%s", path, k, t, quoteAll(fields), naming.DidYouMean(k, fields))
			}
			if err := Conform(m[k], ft, path+"."+k, partial); err != nil {
				return err
			}
		}
		if !partial {
			for _, k := range fields {
				if _, ok := m[k]; !ok {
					return fmt.Errorf("%s leaves out the field %q of %s", path, k, t)
				}
			}
		}
	}
	return nil
}

// Fill returns v with the fields of t that an object leaves out set to
// their zero values ("" , 0, false, [], {}, null for any), recursively.
func Fill(v any, t *graph.Type) any {
	if t == nil {
		return v
	}
	if v == nil {
		return nil
	}
	switch t.Kind {
	case graph.KindObject:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(t.Fields))
		for k, x := range m {
			out[k] = Fill(x, t.Fields[k])
		}
		for k, ft := range t.Fields {
			if _, ok := out[k]; !ok {
				out[k] = zero(ft)
			}
		}
		return out
	case graph.KindList:
		if l, ok := v.([]any); ok {
			out := make([]any, len(l))
			for i, x := range l {
				out[i] = Fill(x, t.Elem)
			}
			return out
		}
	case graph.KindMap:
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for k, x := range m {
				out[k] = Fill(x, t.Elem)
			}
			return out
		}
	}
	return v
}

func zero(t *graph.Type) any {
	switch t.Kind {
	case graph.KindString:
		return ""
	case graph.KindNumber, graph.KindInt:
		return json.Number("0")
	case graph.KindBool:
		return false
	case graph.KindList:
		return []any{}
	case graph.KindMap:
		return map[string]any{}
	case graph.KindObject:
		return Fill(map[string]any{}, t)
	}
	return nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the bool %t", x)
	case json.Number:
		return "the number " + x.String()
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "null"
}

func asInt(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil {
		return 0, false
	}
	return int(i), true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func quoteAll(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	if len(q) == 0 {
		return "none"
	}
	return strings.Join(q, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sentence is err's text ended with a period, unless it ends a sentence
// already (a "Did you mean ...?" suggestion).
func sentence(err error) string {
	t := err.Error()
	if strings.HasSuffix(t, ".") || strings.HasSuffix(t, "?") || strings.HasSuffix(t, "!") {
		return t
	}
	return t + "."
}

// upgradeHas reports whether the graph of upgrade u (nil: none) has a step
// named name.
func upgradeHas(u *Upgrade, name string) bool {
	if u == nil || u.Graph == nil {
		return false
	}
	_, ok := u.Graph.StepIndex(name)
	return ok
}
