package crashtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiskFull: a database on a disk that fills up while a run works is a
// store fault, not a workflow failure. apply stops with exit 5 and a
// message that names the disk and says what to do; the run is not failed
// and keeps what it committed; once space is freed, apply again finishes
// it, running again only the step whose result could not be written.
//
// It needs a small disk of its own: a 4 MiB tmpfs, 2.7 MiB of it filled
// at first (1.3 MiB left: the run stops at its second or third step;
// after the filler is deleted, room for the whole run), which only root can
// mount (CI runs as root).
func TestDiskFull(t *testing.T) {
	needBinary(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	mnt := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	wf := filepath.Join(t.TempDir(), "big.hcl")
	var src strings.Builder
	src.WriteString("workflow \"big\" {\n  version  = \"1.0.0\"\n  pass_env = [\"MARKS\"]\n")
	prev := ""
	for _, name := range []string{"a", "b", "c", "d"} {
		src.WriteString("  step \"" + name + "\" {\n")
		if prev != "" {
			src.WriteString("    depends_on = [step." + prev + "]\n")
		}
		// 150,000 bytes of output, stored twice (as live output chunks
		// while the program runs, and in the attempt's result): four of
		// them do not fit next to the filler, two do.
		src.WriteString("    exec { command = [\"sh\", \"-c\", \"echo " + name + " >> $MARKS; head -c 150000 /dev/zero | tr '\\\\0' " + name + "\"] }\n  }\n")
		prev = name
	}
	src.WriteString("  output \"sizes\" { value = \"{{ [size(steps.a.output.stdout), size(steps.d.output.stdout)] }}\" }\n}\n")
	if err := os.WriteFile(wf, []byte(src.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(mnt, "flowrun.db")
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 2700<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	marks := filepath.Join(t.TempDir(), "marks")
	env := []string{"MARKS=" + marks}

	r := flowrun(t, env, "--db", db, "apply", wf)
	if r.code != 5 || !strings.Contains(r.stderr, "is full") || !strings.Contains(r.stderr, "Free space on that disk") {
		t.Fatalf("apply on a filling disk exited %d, want 5 with a message saying the disk is full and what to do; stderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "panic") {
		t.Fatalf("apply panicked:\n%s", r.stderr)
	}
	type view struct {
		RunID   string         `json:"run_id"`
		Status  string         `json:"status"`
		Outputs map[string]any `json:"outputs"`
		Steps   map[string]struct {
			Status   string `json:"status"`
			Attempts int    `json:"attempts"`
		} `json:"steps"`
	}
	show := func() view {
		t.Helper()
		runs := flowrun(t, nil, "--db", db, "runs", "--json")
		var list []struct {
			RunID string `json:"run_id"`
		}
		if runs.code != 0 || json.Unmarshal([]byte(runs.stdout), &list) != nil || len(list) != 1 {
			t.Fatalf("runs --json exited %d: %s %s", runs.code, runs.stdout, runs.stderr)
		}
		s := flowrun(t, nil, "--db", db, "show", list[0].RunID, "--json")
		var v view
		if err := json.Unmarshal([]byte(s.stdout), &v); err != nil {
			t.Fatalf("show --json exited %d: %v\n%s%s", s.code, err, s.stdout, s.stderr)
		}
		return v
	}
	v := show()
	if v.Status == "failed" || v.Status == "completed" {
		t.Fatalf("after the disk filled up the run is %s, want it unfinished", v.Status)
	}
	if v.Steps["a"].Status != "completed" {
		t.Fatalf("step a is %s after the disk filled up, want completed (it was committed)", v.Steps["a"].Status)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r = flowrun(t, env, "--db", db, "apply", wf)
	if r.code != 0 {
		t.Fatalf("apply after freeing space exited %d; stderr:\n%s", r.code, r.stderr)
	}
	v = show()
	if v.Status != "completed" {
		t.Fatalf("the run is %s after freeing space, want completed", v.Status)
	}
	sizes, _ := v.Outputs["sizes"].([]any)
	if len(sizes) != 2 || sizes[0] != 150000.0 || sizes[1] != 150000.0 {
		t.Fatalf("outputs %v, want sizes [150000, 150000]", v.Outputs)
	}
	if v.Steps["a"].Attempts != 1 {
		t.Errorf("step a ran %d attempts, want 1: it was committed before the disk filled up", v.Steps["a"].Attempts)
	}
	raw, err := os.ReadFile(marks)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, l := range strings.Fields(string(raw)) {
		runs[l]++
	}
	again := 0
	for _, name := range []string{"a", "b", "c", "d"} {
		switch n := runs[name]; {
		case n == 0:
			t.Errorf("step %s never ran", name)
		case n > 2:
			t.Errorf("step %s ran %d times", name, n)
		case n == 2:
			again++
		}
	}
	if again > 1 {
		t.Errorf("%d steps ran twice (%v), want at most the one whose result could not be written", again, runs)
	}
}
