package main

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestExamples runs the examples of examples/README.md as a user does,
// from the files in the repository (not copies), each claim of its table
// checked: testdata/examples has a script per example. The scripts write
// their reports and alert lines into their own work directory.
func TestExamples(t *testing.T) {
	t.Parallel()
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/examples",
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			env.Setenv("FLOWRUN_DB", filepath.Join(env.WorkDir, ".flowrun", "flowrun.db"))
			env.Setenv("ALERT_LOG", filepath.Join(env.WorkDir, "alerts.log"))
			env.Setenv("REPORT_DIR", filepath.Join(env.WorkDir, "reports"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("TZ", "UTC")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"runid":    cmdRunID,
			"waitfile": cmdWaitFile,
			"status":   cmdStatus,
		},
	})
}
