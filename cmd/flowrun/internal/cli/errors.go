package cli

import (
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/store"
)

// exitError is an error that carries the exit code and, usually, a hint that
// says how to fix it. A silent exitError only sets the exit code: what there
// was to say was already printed (diagnostics, a failed run's summary).
type exitError struct {
	code     int
	msg      string
	hintText string
	// lines are printed under the message, indented (the candidates of a
	// run reference); each is escaped for the terminal already.
	lines []string
	err   error
	quiet bool
	// storeHint says the hint is the door's (a refusal, a run reference
	// that names nothing), worded for a caller on the store: through a
	// server, report adds --server URL to the commands it names.
	storeHint bool
}

func (x *exitError) Error() string { return x.message() }

func (x *exitError) Unwrap() error { return x.err }

func (x *exitError) message() string {
	switch {
	case x.msg != "" && x.err != nil:
		return x.msg + ": " + x.err.Error()
	case x.msg != "":
		return x.msg
	case x.err != nil:
		return x.err.Error()
	}
	return fmt.Sprintf("exit status %d", x.code)
}

func (x *exitError) silent() bool { return x.quiet }

// hint attaches a sentence saying how to fix the problem.
func (x *exitError) hint(h string) *exitError {
	x.hintText = h
	return x
}

// doorHint attaches the hint of a refusal of the door (api.Refusal, a
// run reference that names nothing), whose commands name no server.
func (x *exitError) doorHint(h string) *exitError {
	x.hintText, x.storeHint = h, true
	return x
}

// usageErrorf is bad flags or bad input: exit 2.
func usageErrorf(format string, args ...any) *exitError {
	return &exitError{code: ExitInvalid, msg: fmt.Sprintf(format, args...)}
}

// storeError is a failure of the store: exit 5, unless the error says the
// input was wrong (an unknown id), which codeOf classifies.
func storeError(msg string, err error) *exitError {
	if x := remoteExit(msg, err); x != nil {
		return x // a server's refusal or fault (remote.go)
	}
	return &exitError{code: codeOf(err), msg: msg, err: err}
}

// exitCode ends the verb with code without printing anything more.
func exitCode(code int) *exitError {
	return &exitError{code: code, quiet: true}
}

// codeOf classifies an error that carries no exit code of its own.
func codeOf(err error) int {
	var xe *exitError
	switch {
	case errors.As(err, &xe):
		return xe.code
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrAmbiguous),
		errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrVersionConflict),
		errors.Is(err, api.ErrInvalid), errors.Is(err, api.ErrUnauthorized), errors.Is(err, api.ErrForbidden):
		return ExitInvalid
	case errors.Is(err, store.ErrBusy), errors.Is(err, store.ErrSchemaTooNew), errors.Is(err, store.ErrFull), errors.Is(err, store.ErrTimeout):
		return ExitStore
	}
	return ExitStore
}
