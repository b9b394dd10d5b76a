package cli

import (
	"flag"
	"io"
	"reflect"
	"testing"
	"time"
)

func TestParseInterspersed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		positional []string
		inputs     []string
		format     string
		detach     bool
		wantErr    bool
	}{
		{name: "flags first", args: []string{"--format", "dot", "a.hcl"}, positional: []string{"a.hcl"}, format: "dot"},
		{name: "flags after", args: []string{"a.hcl", "--input", "a=1", "b.hcl", "-input=b=2"},
			positional: []string{"a.hcl", "b.hcl"}, inputs: []string{"a=1", "b=2"}},
		{name: "bool takes no value", args: []string{"--detach", "a.hcl"}, positional: []string{"a.hcl"}, detach: true},
		{name: "bool with value", args: []string{"--detach=false", "a.hcl"}, positional: []string{"a.hcl"}},
		{name: "double dash ends flags", args: []string{"--detach", "--", "--format", "x"},
			positional: []string{"--format", "x"}, detach: true},
		{name: "value that looks like a flag", args: []string{"--input", "-x=1"}, inputs: []string{"-x=1"}},
		{name: "single dash is positional", args: []string{"-", "--format", "dot"}, positional: []string{"-"}, format: "dot"},
		{name: "unknown flag", args: []string{"a.hcl", "--nope"}, wantErr: true},
		{name: "missing value", args: []string{"a.hcl", "--format"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var inputs multiFlag
			fs.Var(&inputs, "input", "")
			format := fs.String("format", "", "")
			detach := fs.Bool("detach", false, "")
			pos, err := parseInterspersed(fs, tt.args)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseInterspersed(%q) succeeded, want an error", tt.args)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseInterspersed(%q): %v", tt.args, err)
			}
			if !reflect.DeepEqual(pos, tt.positional) {
				t.Errorf("positional = %q, want %q", pos, tt.positional)
			}
			if !reflect.DeepEqual([]string(inputs), tt.inputs) {
				t.Errorf("inputs = %q, want %q", inputs, tt.inputs)
			}
			if *format != tt.format || *detach != tt.detach {
				t.Errorf("format, detach = %q, %v; want %q, %v", *format, *detach, tt.format, tt.detach)
			}
		})
	}
}

// TestFlagMessage: a flag error names the flag as typed, not with the one
// dash the flag package always writes.
func TestFlagMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"a.hcl", "--bogus"}, "unknown flag --bogus"},
		{[]string{"-bogus=x"}, "unknown flag -bogus"},
		{[]string{"--format"}, "flag --format needs a value"},
		{[]string{"-format"}, "flag -format needs a value"},
		{[]string{"--detach=maybe"}, `flag --detach takes true or false, not "maybe"`},
		{[]string{"-detach=2"}, `flag -detach takes true or false, not "2"`},
		{[]string{"--choice", "x"}, `invalid value "x" for flag --choice: must be one of a, b`},
		{[]string{"-choice=x"}, `invalid value "x" for flag -choice: must be one of a, b`},
		// The flag package says only "parse error" of a number or a
		// duration; the message says what to write.
		{[]string{"--limit", "x"}, `invalid value "x" for flag --limit: give a whole number, like 50`},
		{[]string{"--limit=1.5"}, `invalid value "1.5" for flag --limit: give a whole number, like 50`},
		{[]string{"--limit", "99999999999999999999"}, `invalid value "99999999999999999999" for flag --limit: it is too large; give a whole number, like 50`},
		{[]string{"--scale", "big"}, `invalid value "big" for flag --scale: give a number, like 1`},
		{[]string{"--grace", "30"}, `invalid value "30" for flag --grace: give a duration with its unit, like 500ms, 30s, 5m or 1h30m`},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("format", "", "")
		fs.Bool("detach", false, "")
		fs.Var(&choiceFlag{choices: []string{"a", "b"}}, "choice", "")
		fs.Int("limit", 50, "")
		fs.Float64("scale", 1, "")
		fs.Duration("grace", 30*time.Second, "")
		_, err := parseInterspersed(fs, tt.args)
		if err == nil {
			t.Errorf("parseInterspersed(%q) succeeded, want an error", tt.args)
			continue
		}
		if got := flagMessage(err); got != tt.want {
			t.Errorf("parseInterspersed(%q): flagMessage = %q, want %q", tt.args, got, tt.want)
		}
	}
}
