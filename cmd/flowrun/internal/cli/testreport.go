package cli

// The reports of flowrun test: go-test-like text (or JSON events) on
// stdout, JUnit XML (--junit), and coverage (--cover, --coverprofile as
// LCOV, --coverjson).

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/testfile"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/testrun"
)

type testReport struct {
	e      *env
	flags  testFlags
	ran    int
	failed int
	// dirFailed counts the failures of the directory being run.
	dirFailed int
	cases     []junitCase
	cover     map[string]*workflowCover // by workflow name
	order     []string
	srcs      map[string]*lang.SourceMap // by workflow name: file and step lines
}

// testEvent is one line of --json.
type testEvent struct {
	Action   string            `json:"action"` // run, pass, fail, dir
	Dir      string            `json:"dir"`
	Test     string            `json:"test,omitempty"`
	Elapsed  float64           `json:"elapsed,omitempty"`
	Status   string            `json:"status,omitempty"`
	Replays  int               `json:"replays,omitempty"`
	Failures []testrun.Failure `json:"failures,omitempty"`
}

func (r *testReport) event(ev testEvent) {
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	fmt.Fprintf(r.e.stdout, "%s\n", b)
}

func (r *testReport) start(dir, full string) {
	r.ran++
	if r.flags.json {
		r.event(testEvent{Action: "run", Dir: dir, Test: full})
	}
}

func (r *testReport) result(dir, full string, t *testfile.Test, res testrun.Result) {
	r.addCover(t.Graph, res)
	jc := junitCase{Name: full, Classname: dir, Time: fmt.Sprintf("%.3f", res.Elapsed.Seconds())}
	if !res.Pass {
		r.failed++
		r.dirFailed++
		var b strings.Builder
		for _, f := range res.Failures {
			b.WriteString(failureText(f))
			b.WriteString("\n")
		}
		jc.Failure = &junitFailure{Message: fmt.Sprintf("%d failed expectations", len(res.Failures)), Text: b.String()}
	}
	r.cases = append(r.cases, jc)
	if r.flags.json {
		action := "pass"
		if !res.Pass {
			action = "fail"
		}
		r.event(testEvent{Action: action, Dir: dir, Test: full, Elapsed: res.Elapsed.Seconds(), Status: res.Status, Replays: res.Replays, Failures: res.Failures})
		return
	}
	word := "PASS"
	if !res.Pass {
		word = "FAIL"
	}
	extra := ""
	if r.flags.crash {
		extra = fmt.Sprintf(", %d crash replays", res.Replays)
	}
	fmt.Fprintf(r.e.stdout, "--- %s: %s (%s%s)\n", word, termtext.Line(full), seconds(res.Elapsed), extra)
	for _, f := range res.Failures {
		fmt.Fprintf(r.e.stdout, "%s\n", indentLines(termtext.Line(failureText(f)), "    "))
	}
}

// failureText words one failure: where, what, expected and actual.
func failureText(f testrun.Failure) string {
	var b strings.Builder
	if f.Pos != "" {
		b.WriteString(f.Pos + ": ")
	}
	b.WriteString(f.What)
	if f.Expected != "" || f.Actual != "" {
		fmt.Fprintf(&b, ": expected %s, actual %s", f.Expected, f.Actual)
		if f.Message != "" {
			b.WriteString(" (" + f.Message + ")")
		}
	} else if f.Message != "" {
		b.WriteString(": " + f.Message)
	}
	return b.String()
}

func (r *testReport) dirDone(dir string, d time.Duration) {
	if r.flags.json {
		status := "ok"
		if r.dirFailed > 0 {
			status = "fail"
		}
		r.event(testEvent{Action: "dir", Dir: dir, Elapsed: d.Seconds(), Status: status})
	} else if r.dirFailed > 0 {
		fmt.Fprintf(r.e.stdout, "FAIL\t%s\t%s\n", dir, seconds(d))
	} else {
		fmt.Fprintf(r.e.stdout, "ok  \t%s\t%s\n", dir, seconds(d))
	}
	r.dirFailed = 0
}

func (r *testReport) finish() error {
	if r.flags.cover && !r.flags.json {
		r.printCover()
	}
	if r.flags.coverjson != "" {
		if err := r.writeCoverJSON(r.flags.coverjson); err != nil {
			return err
		}
	}
	if r.flags.coverprofile != "" {
		if err := r.writeLCOV(r.flags.coverprofile); err != nil {
			return err
		}
	}
	if r.flags.junit != "" {
		if err := r.writeJUnit(r.flags.junit); err != nil {
			return err
		}
	}
	return nil
}

// JUnit XML, as CI systems read it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func (r *testReport) writeJUnit(path string) error {
	out := junitSuites{Tests: len(r.cases), Failures: r.failed}
	byDir := map[string]int{}
	for _, c := range r.cases {
		i, ok := byDir[c.Classname]
		if !ok {
			i = len(out.Suites)
			byDir[c.Classname] = i
			out.Suites = append(out.Suites, junitSuite{Name: c.Classname})
		}
		s := &out.Suites[i]
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the JUnit report: %w", err)
	}
	if err := os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644); err != nil {
		return usageErrorf("--junit %s: cannot write the report: %v", path, err)
	}
	return nil
}

// workflowCover is the coverage of one workflow over every test run.
type workflowCover struct {
	g     *graph.Graph
	Steps map[string]*stepCover `json:"steps"`
}

type stepCover struct {
	Ran     int `json:"ran"`     // tests in which it completed or failed
	Skipped int `json:"skipped"` // tests in which it was skipped
	// Branches a switch step took, by branch name: tests that took it.
	Branches map[string]int `json:"branches,omitempty"`
	// When says the step has a when condition: it is a branch of its own.
	When bool `json:"when,omitempty"`
}

func (r *testReport) addCover(g *graph.Graph, res testrun.Result) {
	if g == nil || res.Steps == nil {
		return
	}
	if r.cover == nil {
		r.cover = map[string]*workflowCover{}
	}
	wc := r.cover[g.Workflow]
	if wc == nil {
		wc = &workflowCover{g: g, Steps: map[string]*stepCover{}}
		for _, s := range g.Steps {
			sc := &stepCover{When: s.When != nil}
			if s.Action.Kind == graph.KindSwitch {
				sc.Branches = map[string]int{}
				for _, b := range switchBranches(s) {
					sc.Branches[b] = 0
				}
			}
			wc.Steps[s.Name] = sc
		}
		r.cover[g.Workflow] = wc
		r.order = append(r.order, g.Workflow)
	}
	for name, c := range res.Steps {
		sc := wc.Steps[name]
		if sc == nil {
			continue
		}
		switch c.Status {
		case "completed", "failed":
			sc.Ran++
		case "skipped":
			sc.Skipped++
		}
		if c.Branch != "" && sc.Branches != nil {
			sc.Branches[c.Branch]++
		}
	}
}

// switchBranches are the branch names a switch step can take, as its
// output names them: case0, case1, ... and default (none when it has no
// default).
func switchBranches(s *graph.Step) []string {
	var out []string
	for i := range s.Action.Switch.Cases {
		out = append(out, fmt.Sprintf("case%d", i))
	}
	if len(s.Action.Switch.Default) > 0 {
		return append(out, "default")
	}
	return append(out, "none")
}

func (r *testReport) printCover() {
	for _, name := range r.order {
		wc := r.cover[name]
		ran := 0
		var notRun, whenOneWay []string
		for _, s := range wc.g.Steps {
			sc := wc.Steps[s.Name]
			if sc.Ran > 0 {
				ran++
			} else {
				notRun = append(notRun, s.Name)
			}
			if sc.When && (sc.Ran == 0 || sc.Skipped == 0) {
				whenOneWay = append(whenOneWay, s.Name)
			}
		}
		total := len(wc.g.Steps)
		fmt.Fprintf(r.e.stdout, "coverage: workflow %s: %d of %d steps ran (%.1f%%)\n", name, ran, total, 100*float64(ran)/float64(max(total, 1)))
		if len(notRun) > 0 {
			fmt.Fprintf(r.e.stdout, "  never ran: %s\n", strings.Join(notRun, ", "))
		}
		for _, s := range wc.g.Steps {
			sc := wc.Steps[s.Name]
			if sc.Branches == nil {
				continue
			}
			var taken, not []string
			for _, b := range switchBranches(s) {
				if sc.Branches[b] > 0 {
					taken = append(taken, b)
				} else {
					not = append(not, b)
				}
			}
			line := fmt.Sprintf("  switch %s: took %s", s.Name, noneIfEmpty(taken))
			if len(not) > 0 {
				line += "; never took " + strings.Join(not, ", ")
			}
			fmt.Fprintln(r.e.stdout, line)
		}
		for _, n := range whenOneWay {
			sc := wc.Steps[n]
			way := "never skipped"
			if sc.Ran == 0 {
				way = "never ran"
			}
			fmt.Fprintf(r.e.stdout, "  when of %s: %s\n", n, way)
		}
	}
}

func noneIfEmpty(l []string) string {
	if len(l) == 0 {
		return "no branch"
	}
	return strings.Join(l, ", ")
}

func (r *testReport) writeCoverJSON(path string) error {
	out := map[string]any{}
	names := append([]string(nil), r.order...)
	sort.Strings(names)
	for _, n := range names {
		out[n] = r.cover[n]
	}
	b, err := json.MarshalIndent(map[string]any{"workflows": out}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the coverage profile: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return usageErrorf("--coverjson %s: cannot write the profile: %v", path, err)
	}
	return nil
}

// sources records the source map of a workflow, for the LCOV profile's
// file names and lines.
func (r *testReport) sources(workflow string, sm *lang.SourceMap) {
	if r.srcs == nil {
		r.srcs = map[string]*lang.SourceMap{}
	}
	r.srcs[workflow] = sm
}

// writeLCOV writes the coverage as an LCOV tracefile (the format of
// geninfo, read by Codecov, Coveralls, SonarQube and genhtml): one record
// per workflow file, a line (DA) per step, hit by the tests in which it
// ran, and branches (BRDA) for each switch step's cases and for each
// when condition (ran, skipped). A step's line is its step block's.
func (r *testReport) writeLCOV(path string) error {
	byFile := map[string][]string{} // file -> workflows in it
	var files []string
	for _, name := range r.order {
		f := name + ".hcl"
		if sm := r.srcs[name]; sm != nil && sm.File != "" {
			f = sm.File
		}
		if byFile[f] == nil {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], name)
	}
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		b.WriteString("TN:\nSF:" + f + "\n")
		lf, lh, brf, brh := 0, 0, 0, 0
		for _, name := range byFile[f] {
			wc := r.cover[name]
			sm := r.srcs[name]
			line := func(step string) int {
				if sm == nil {
					return 0
				}
				return sm.Block("step." + step).Start.Line
			}
			for _, s := range wc.g.Steps {
				sc := wc.Steps[s.Name]
				n := line(s.Name)
				if n <= 0 {
					continue
				}
				fmt.Fprintf(&b, "DA:%d,%d\n", n, sc.Ran)
				lf++
				if sc.Ran > 0 {
					lh++
				}
				branch := func(block, br int, taken int) {
					fmt.Fprintf(&b, "BRDA:%d,%d,%d,%d\n", n, block, br, taken)
					brf++
					if taken > 0 {
						brh++
					}
				}
				if sc.When {
					branch(0, 0, sc.Ran)
					branch(0, 1, sc.Skipped)
				}
				if sc.Branches != nil {
					for i, br := range switchBranches(s) {
						branch(1, i, sc.Branches[br])
					}
				}
			}
		}
		fmt.Fprintf(&b, "LF:%d\nLH:%d\nBRF:%d\nBRH:%d\nend_of_record\n", lf, lh, brf, brh)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return usageErrorf("--coverprofile %s: cannot write the profile: %v", path, err)
	}
	return nil
}
