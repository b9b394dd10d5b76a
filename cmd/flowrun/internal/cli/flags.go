package cli

import (
	"flag"
	"fmt"
	"strings"
)

// parseInterspersed parses args with fs, letting flags stand after
// positional arguments (`flowrun apply x.hcl --input a=1`), the way most
// command lines behave and the standard flag package does not. Everything
// after "--" is positional. Both -flag and --flag are accepted, as the flag
// package does.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, positional []string
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
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
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
		return nil, err
	}
	// fs.Parse stops at the first non-flag; with the reordering above that
	// can only be a value of a flag that takes none, which is a mistake.
	if rest := fs.Args(); len(rest) > 0 {
		return nil, fmt.Errorf("unexpected argument %q among the flags", rest[0])
	}
	return positional, nil
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
