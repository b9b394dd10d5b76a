package interp

import (
	"slices"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
)

// The environment of an exec program (semantics.md §11) is declared, never
// the worker's whole environment: from the worker it takes the base list
// below and the variables its workflow names in pass_env, and nothing
// else; then its step's env; then the variables flowrun sets for it. No
// variable of the worker's own environment whose name starts with FLOWRUN_
// (FLOWRUN_DB above all) ever reaches a program, even when a graph that
// did not come from the compiler names it.

// baseEnv are the variables every program takes from the worker's
// environment: what finds programs and files and what sets the locale and
// the time zone. Every LC_* variable is taken as well (baseEnvPrefix).
var baseEnv = []string{"HOME", "LANG", "LC_ALL", "PATH", "TMPDIR", "TZ", "USER"}

// baseEnvPrefix starts the locale variables a program takes (LC_ALL,
// LC_CTYPE, LC_TIME, ...).
const baseEnvPrefix = "LC_"

// workerEnv returns the entries of the worker's environment (environ, as
// os.Environ gives it) that a program whose action names pass in pass_env
// takes, in environ's order. An entry without "=" and an entry of a
// FLOWRUN_* variable are never taken.
func workerEnv(environ []string, pass []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.HasPrefix(name, graph.ReservedEnvPrefix) {
			continue
		}
		if strings.HasPrefix(name, baseEnvPrefix) || slices.Contains(baseEnv, name) || slices.Contains(pass, name) {
			out = append(out, kv)
		}
	}
	return out
}

// programEnv is the whole environment of a program: the worker's entries
// it takes (workerEnv), then own: its step's env and after it the
// variables flowrun sets for the attempt. os/exec keeps the last entry of
// a name, so a step's env overrides the worker's value and flowrun's
// variables override both. The result is never nil: os/exec gives a
// command with a nil Env the whole environment of this process.
func programEnv(worker, own []string) []string {
	env := make([]string, 0, len(worker)+len(own))
	env = append(env, worker...)
	return append(env, own...)
}
