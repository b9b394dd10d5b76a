// Package display is what every flowtui component draws with: the size of
// the area it may draw in, the styles it draws in (theme.Styles, in colour
// or plain) and the clock that durations and countdowns are measured on.
// One Display is made per program (flowtui's root, apply's live view and
// decision prompt) and every component keeps a pointer to it, so a resize
// reaches all of them at once.
//
// display must not read the store, hold component state, render anything
// or start goroutines.
package display

import (
	"fmt"
	"io"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/tui/theme"
)

// MinWidth and MinHeight are the smallest terminal flowtui draws in; below
// them it shows a message asking for a larger window instead of a garbled
// screen.
const (
	MinWidth  = 60
	MinHeight = 16
)

// Display is shared by every component of a program.
type Display struct {
	Width  int
	Height int
	Styles *theme.Styles
	Clock  clock.Clock
}

// New returns an 80x24 Display whose styles render for out. noColor forces
// plain styles; callers pass true when NO_COLOR is set. A nil clk is the
// real clock.
func New(out io.Writer, noColor bool, clk clock.Clock) *Display {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Display{Width: 80, Height: 24, Styles: theme.For(out, noColor), Clock: clk}
}

// TooSmall reports whether the terminal is below the smallest usable size.
func (d *Display) TooSmall() bool { return d.Width < MinWidth || d.Height < MinHeight }

// TooSmallMessage is what a screen below MinWidth x MinHeight shows.
func TooSmallMessage(width, height int) string {
	return fmt.Sprintf("The terminal is %dx%d; flowtui needs at least %dx%d.\nMake the window larger, or press q to quit.",
		width, height, MinWidth, MinHeight)
}
