package graph

import (
	"github.com/flowrun/flowrun/lang/naming"
)

// ReservedEnvPrefix starts the names of flowrun's own variables: those it
// sets for a program (FLOWRUN_STEP, ...) and those that configure flowrun
// itself (FLOWRUN_DB). No variable of the worker's environment with this
// prefix reaches a program, so pass_env cannot name one.
const ReservedEnvPrefix = "FLOWRUN_"

// maxEnvNameLen is the longest environment variable name flowrun accepts.
const maxEnvNameLen = 255

// ValidEnvName reports whether s can be an environment variable name that
// a workflow refers to: letters, digits and underscores, starting with a
// letter or underscore, at most 255 bytes.
func ValidEnvName(s string) bool {
	return naming.ValidIdent(s) && len(s) <= maxEnvNameLen
}
