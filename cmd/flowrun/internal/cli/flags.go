package cli

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/lang/naming"
)

// parseInterspersed parses args with fs, letting flags stand after
// positional arguments (`flowrun apply x.hcl --input a=1`), the way most
// command lines behave and the standard flag package does not. Everything
// after "--" is positional. Both -flag and --flag are accepted, as the flag
// package does.
//
// A flag error is a *flagError, which names the flag as the user typed it
// (--bogus, -f), where the flag package always writes one dash.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, positional []string
	typed := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		spelled, _, hasValue := strings.Cut(a, "=")
		name := strings.TrimLeft(spelled, "-")
		if _, seen := typed[name]; !seen {
			typed[name] = spelled
		}
		if hasValue {
			continue
		}
		f := fs.Lookup(name)
		if f == nil || isBoolFlag(f) {
			// Unknown flags are reported by fs.Parse below; bool flags
			// take no separate value.
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &flagError{err: err, typed: typed, fs: fs}
	}
	// fs.Parse stops at the first non-flag; with the reordering above that
	// can only be a value of a flag that takes none, which is a mistake.
	if rest := fs.Args(); len(rest) > 0 {
		return nil, fmt.Errorf("unexpected argument %q among the flags", rest[0])
	}
	return positional, nil
}

// flagError is an error of the flag package, with the flags as typed.
type flagError struct {
	err   error
	typed map[string]string // flag name → as typed: "--bogus", "-f"
	fs    *flag.FlagSet     // the flags, to say what a value should look like
}

func (e *flagError) Error() string { return e.err.Error() }

func (e *flagError) Unwrap() error { return e.err }

// flagMessage rewords the flag package's errors as sentences that name the
// flag as the user typed it (the flag package writes -name whatever was
// typed), or with two dashes, as the usage writes flags, when it cannot
// tell.
func flagMessage(err error) string {
	msg := err.Error()
	var typed map[string]string
	var fs *flag.FlagSet
	var fe *flagError
	if errors.As(err, &fe) {
		msg, typed, fs = fe.err.Error(), fe.typed, fe.fs
	}
	as := func(name string) string {
		if t, ok := typed[name]; ok {
			return t
		}
		return "--" + name
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag " + as(name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag " + as(name) + " needs a value"
	}
	if m := badBoolValue().FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("flag %s takes true or false, not %s", as(m[2]), m[1])
	}
	if m := badValue().FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("invalid value %s for flag %s: %s", m[1], as(m[2]), valueWant(fs, m[2], m[3]))
	}
	return msg
}

// valueWant says what the value of a number or duration flag should look
// like, where the flag package says only "parse error" or "value out of
// range"; another reason (a Set method's own sentence) is kept.
func valueWant(fs *flag.FlagSet, name, reason string) string {
	if fs == nil || (reason != "parse error" && reason != "value out of range") {
		return reason
	}
	f := fs.Lookup(name)
	if f == nil {
		return reason
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return reason
	}
	tooLarge := ""
	if reason == "value out of range" {
		tooLarge = "it is too large; "
	}
	switch g.Get().(type) {
	case int, int64:
		return tooLarge + "give a whole number, like " + f.DefValue
	case uint, uint64:
		return tooLarge + "give a whole number, 0 or more, like " + f.DefValue
	case float64:
		return tooLarge + "give a number, like " + f.DefValue
	case time.Duration:
		return "give a duration with its unit, like 500ms, 30s, 5m or 1h30m"
	}
	return reason
}

// The flag package's messages about a value (flag.FlagSet.parseOne),
// compiled when a flag is wrong rather than at every start.
var (
	badBoolValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^invalid boolean value ("(?:[^"\\]|\\.)*") for -([^:]+): `)
	})
	badValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -([^:]+): (.*)$`)
	})
)

// flagSuggestion is the "did you mean" of an unknown flag: the nearest
// name, or for a one-letter flag (-i), which every other one-letter flag
// is one edit from, the flags that begin with its letter (--input or
// --inputs); "" when there is none.
func flagSuggestion(typed string, names []string) string {
	var near []string
	if len([]rune(typed)) == 1 {
		for _, n := range names {
			if len(n) > 1 && strings.EqualFold(n[:1], typed) {
				near = append(near, flagSpelling(n))
			}
		}
		if len(near) == 0 || len(near) > 3 {
			return ""
		}
	} else if n := naming.NearestName(typed, names); n != "" {
		near = []string{flagSpelling(n)}
	}
	switch len(near) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + near[0] + "?"
	}
	return "; did you mean " + strings.Join(near[:len(near)-1], ", ") + " or " + near[len(near)-1] + "?"
}

// flagSpelling is how usage and completion write a flag: one dash for a
// one-letter flag (-f, as Unix tools and the usage lines write it), two for
// the others (--json). Both spellings parse either way.
func flagSpelling(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// multiFlag is a flag that may be given many times (--input k=v ...).
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(s string) error {
	*m = append(*m, s)
	return nil
}

// choiceFlag is a string flag limited to a few values.
type choiceFlag struct {
	value   string
	choices []string
}

func (c *choiceFlag) String() string { return c.value }

func (c *choiceFlag) Set(s string) error {
	for _, ch := range c.choices {
		if s == ch {
			c.value = s
			return nil
		}
	}
	return fmt.Errorf("must be one of %s", strings.Join(c.choices, ", "))
}

// choicesFlag is a comma-separated list of choices: --status failed,canceled.
type choicesFlag struct {
	values  []string
	choices []string
}

func (c *choicesFlag) String() string { return strings.Join(c.values, ",") }

func (c *choicesFlag) Set(s string) error {
	c.values = nil
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if !slices.Contains(c.choices, v) {
			if len(strings.Split(s, ",")) > 1 {
				return fmt.Errorf("%q must be one of %s; several go comma-separated, like failed,canceled", v, strings.Join(c.choices, ", "))
			}
			return fmt.Errorf("must be one of %s; several go comma-separated, like failed,canceled", strings.Join(c.choices, ", "))
		}
		if !slices.Contains(c.values, v) {
			c.values = append(c.values, v)
		}
	}
	return nil
}

// sinceFlag is an instant in the past: an age (30m, 12h, 7d, 2w) before
// now, or an RFC 3339 time or a date (2026-12-01, midnight UTC).
type sinceFlag struct {
	text string
	age  time.Duration
	at   time.Time
}

func (f *sinceFlag) String() string { return f.text }

func (f *sinceFlag) Set(s string) error {
	f.text = s
	if d, err := parseAge(s); err == nil {
		f.age, f.at = d, time.Time{}
		return nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			f.age, f.at = 0, t
			return nil
		}
	}
	return fmt.Errorf("%q is neither an age (30m, 12h, 7d, 2w) nor a time (2026-12-01 or 2026-12-01T09:00:00Z)", s)
}

// since is the instant f names at now; zero when it was not given.
func (f *sinceFlag) since(now time.Time) time.Time {
	if f.age > 0 {
		return now.Add(-f.age)
	}
	return f.at
}
