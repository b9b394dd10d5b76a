package cli

import (
	"flag"

	"github.com/flowrun/flowrun/interp"
)

// execUserFlag adds --exec-user to a command that runs exec programs
// (apply, worker). The returned func looks the user up and sets
// e.execUser; call it before the engine is made. A user that does not
// exist, or a flowrun that is not root, is a usage error naming the flag.
func (e *env) execUserFlag(fs *flag.FlagSet) func() error {
	name := fs.String("exec-user", "", "run exec programs as the user `NAME` (or a uid; needs root), away from the worker's secrets and files (spec/security.md §9)")
	return func() error {
		if *name == "" {
			return nil
		}
		u, err := interp.LookupExecUser(*name)
		if err != nil {
			return usageErrorf("--exec-user %s: %v", *name, err).hint("Name an existing unprivileged user (useradd --system flowrun-steps) and run flowrun as root, or drop --exec-user.")
		}
		e.execUser = u
		return nil
	}
}
