package interp

import (
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
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

	inputs  map[string]any    // decoded, when held (viewRunner); else see input
	conv    *expr.ConvCache   // inputs converted for CEL, once per type
	secrets map[string]string // a secret too short to hide is "" (secretValues)
	red     *redactor
	info    expr.RunInfo
}

// MinSecretLen is the shortest secret value flowrun takes: hiding a
// shorter one would mask every occurrence of those few characters in
// every output, log and error of the run. A shorter value counts as unset,
// and a step that needs it fails saying why (missingSecret).
const MinSecretLen = 4

// secretValues reads the values of a graph's secrets from getenv; a value
// shorter than MinSecretLen is left out ("").
func secretValues(getenv func(string) string, secrets []graph.Secret) map[string]string {
	out := make(map[string]string, len(secrets))
	for _, s := range secrets {
		if v := getenv(s.Env); len(v) >= MinSecretLen {
			out[s.Name] = v
		} else {
			out[s.Name] = ""
		}
	}
	return out
}
