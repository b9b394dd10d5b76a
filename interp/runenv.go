package interp

import (
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/store"
)

// runEnv is what a runner works with and does not change once the run is
// rebuilt: the loaded graph, the run as last committed, the lease it
// holds, and the run's inputs, secrets and redactor. The scheduler reads
// it and never changes it (the supervisor mirrors each commit into run).
type runEnv struct {
	l     *loaded
	run   store.Run // as last committed (applyRun mirrors each commit)
	lease store.Lease
	owner string

	inputs  map[string]any  // decoded, when held (viewRunner); else see input
	conv    *expr.ConvCache // inputs converted for CEL, once per type
	secrets map[string]string
	red     *redactor
	info    expr.RunInfo
}
