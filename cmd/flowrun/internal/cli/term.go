package cli

import (
	"io"
	"os"

	"github.com/charmbracelet/x/term"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// useColor reports whether output to w may use colour: only on a terminal,
// and never when NO_COLOR is set (https://no-color.org).
func (e *env) useColor(w io.Writer) bool {
	return e.getenv("NO_COLOR") == "" && isTerminal(w)
}

// width returns the terminal width of w, or 0 when w is not a terminal.
func width(w io.Writer) uint {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0
	}
	cols, _, err := term.GetSize(f.Fd())
	if err != nil || cols <= 0 {
		return 0
	}
	return uint(cols)
}
