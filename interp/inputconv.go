package interp

// Inputs as a front end gets them: a JSON object (a file) and NAME=VALUE
// texts, converted by the types the workflow declares and checked before
// anything is stored (language.md §2).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flowrun/flowrun/lang/graph"
)

// ConvertInputsParams are the inputs of a run as given.
type ConvertInputsParams struct {
	// Graph declares the inputs.
	Graph *graph.Graph
	// Object holds inputs given as JSON values (an inputs file); nil for
	// none.
	Object map[string]any
	// Pairs are inputs given as NAME=VALUE texts, each VALUE converted by
	// its input's declared type; they win over Object.
	Pairs []string
}

// InputProblem says what is wrong with given inputs.
type InputProblem int

const (
	// InputNotPair: a pair has no "=" or an empty name.
	InputNotPair InputProblem = iota + 1
	// InputUnknown: the workflow declares no input of that name.
	InputUnknown
	// InputBadValue: the value does not convert to, or is not of, the
	// input's declared type.
	InputBadValue
	// InputMissing: required inputs (without a default) are not given.
	InputMissing
)

// ConvertError is a problem with given inputs, found before the store is
// touched. The front end words it for its own flags.
type ConvertError struct {
	Problem InputProblem
	// Workflow is the workflow's name.
	Workflow string
	// Name is the input (InputUnknown, InputBadValue).
	Name string
	// Pair is the NAME=VALUE text as given; "" when the input came from
	// Object.
	Pair string
	// Type is the input's declared type (InputBadValue).
	Type *graph.Type
	// Declared are the declared inputs, sorted (InputUnknown).
	Declared []string
	// Missing are the required inputs not given, sorted (InputMissing).
	Missing []string
	// Err is why the value is refused (InputBadValue).
	Err error
}

func (e *ConvertError) Error() string {
	switch e.Problem {
	case InputNotPair:
		return fmt.Sprintf("%q is not NAME=VALUE", e.Pair)
	case InputUnknown:
		if len(e.Declared) == 0 {
			return fmt.Sprintf("workflow %q has no input %q; it declares no inputs", e.Workflow, e.Name)
		}
		return fmt.Sprintf("workflow %q has no input %q; it declares %s", e.Workflow, e.Name, commaQuoted(e.Declared))
	case InputMissing:
		if len(e.Missing) == 1 {
			return fmt.Sprintf("workflow %q needs input %s, which has no default", e.Workflow, commaQuoted(e.Missing))
		}
		return fmt.Sprintf("workflow %q needs inputs %s, which have no default", e.Workflow, commaQuoted(e.Missing))
	}
	return fmt.Sprintf("input %q: %v", e.Name, e.Err)
}

func (e *ConvertError) Unwrap() error { return e.Err }

// commaQuoted renders names as "a", "b", "c": the messages of a
// ConvertError, which the CLI and the HTTP API both print.
func commaQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// ConvertInputs builds a run's inputs from p: the values of p.Object, then
// p.Pairs converted by each input's declared type (a number, a bool, true
// or false, a string as written, JSON for lists, maps and objects, JSON or
// else the text for any). Every value is checked against its declared
// type, unknown names are refused, and the inputs without a default must be
// given. Defaults are left to StartRun. A problem is a *ConvertError.
func ConvertInputs(ctx context.Context, p ConvertInputsParams) (map[string]any, error) {
	g := p.Graph
	declared := make(map[string]*graph.Type, len(g.Inputs))
	names := make([]string, 0, len(g.Inputs))
	for _, in := range g.Inputs {
		declared[in.Name] = in.Type
		names = append(names, in.Name)
	}
	sort.Strings(names)
	unknown := func(name, pair string) error {
		return &ConvertError{Problem: InputUnknown, Workflow: g.Workflow, Name: name, Pair: pair, Declared: names}
	}
	inputs := map[string]any{}
	for k, v := range p.Object {
		t, ok := declared[k]
		if !ok {
			return nil, unknown(k, "")
		}
		if err := graph.CheckValue(t, v, k); err != nil {
			return nil, &ConvertError{Problem: InputBadValue, Workflow: g.Workflow, Name: k, Type: t, Err: err}
		}
		inputs[k] = v
	}
	for _, pair := range p.Pairs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		k, raw, ok := strings.Cut(pair, "=")
		if !ok || k == "" {
			return nil, &ConvertError{Problem: InputNotPair, Workflow: g.Workflow, Pair: pair}
		}
		t, ok := declared[k]
		if !ok {
			return nil, unknown(k, pair)
		}
		v, err := ConvertInput(t, raw)
		if err == nil {
			err = graph.CheckValue(t, v, k)
		}
		if err != nil {
			return nil, &ConvertError{Problem: InputBadValue, Workflow: g.Workflow, Name: k, Pair: pair, Type: t, Err: err}
		}
		inputs[k] = v
	}
	var missing []string
	for _, in := range g.Inputs {
		if _, ok := inputs[in.Name]; !ok && in.Default == nil {
			missing = append(missing, in.Name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &ConvertError{Problem: InputMissing, Workflow: g.Workflow, Missing: missing}
	}
	return inputs, nil
}

// ConvertInput turns the text of one NAME=VALUE input into a value of
// type t. Text that opens more than graph.MaxValueDepth lists or objects
// is refused for every type but string, valid JSON or not: for type any
// it would otherwise be kept as a string when encoding/json gives up on it.
func ConvertInput(t *graph.Type, raw string) (any, error) {
	if t.Kind != graph.KindString {
		if off := graph.JSONDepthOver([]byte(raw), graph.MaxValueDepth); off >= 0 {
			return nil, fmt.Errorf("the value nests deeper than %d levels of lists and objects (at byte %d); flatten it", graph.MaxValueDepth, off+1)
		}
	}
	switch t.Kind {
	case graph.KindString:
		return raw, nil
	case graph.KindNumber, graph.KindInt:
		if n := json.Number(strings.TrimSpace(raw)); graph.IsIntLiteral(string(n)) {
			return graph.ExactNumber(n), nil // exact past 2^53 (language.md §12)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q is not a number", raw)
		}
		return f, nil
	case graph.KindBool:
		switch raw {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a bool (true or false)", raw)
	case graph.KindAny:
		var v any
		if err := graph.UnmarshalJSON([]byte(raw), &v); err == nil {
			var se *StrictJSONError
			if errors.As(StrictJSON([]byte(raw)), &se) {
				return nil, fmt.Errorf("the value is JSON that reading would change: %s", strictMsg(se))
			}
			return v, nil
		}
		return raw, nil
	}
	var v any
	if err := DecodeJSONValue([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("the value is not valid JSON for %s: %v", t, err)
	}
	return v, nil
}

// strictMsg words what StrictJSON refused for a *JSONError, whose offset
// says where.
func strictMsg(se *StrictJSONError) string {
	if se.Key != "" {
		return fmt.Sprintf("the key %s is given twice in one object; give each key once", strconv.Quote(se.Key))
	}
	return se.Msg
}

// JSONError is a JSON syntax error with the byte offset where it was
// found.
type JSONError struct {
	Offset int64
	Msg    string
}

func (j *JSONError) Error() string { return j.Msg }

// atEOF reports whether nothing but white space is left in dec's input.
func atEOF(dec *json.Decoder) bool {
	_, err := dec.Token()
	return errors.Is(err, io.EOF)
}

// InvalidUTF8At returns the offset of the first byte of b that is not
// part of valid UTF-8, or -1 when b is valid UTF-8.
func InvalidUTF8At(b []byte) int {
	for off := 0; off < len(b); {
		r, n := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && n == 1 {
			return off
		}
		off += n
	}
	return -1
}

// DecodeJSONValue decodes exactly one JSON value, refusing trailing data,
// text that is not UTF-8 (JSON is UTF-8, and encoding/json would silently
// turn such bytes into U+FFFD) and what StrictJSON refuses (a key given
// twice, of which encoding/json would keep the last unseen; a lone
// surrogate), as the API refuses them in a body. A syntax error is a
// *JSONError.
func DecodeJSONValue(data []byte, v any) error {
	if off := InvalidUTF8At(data); off >= 0 {
		return &JSONError{Offset: int64(off), Msg: "the text is not valid UTF-8"}
	}
	var se *StrictJSONError
	if errors.As(StrictJSON(data), &se) {
		return &JSONError{Offset: se.Offset, Msg: strictMsg(se)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	p, exact := v.(*any)
	if exact {
		dec.UseNumber() // integers past 2^53 stay exact (language.md §12)
	}
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			// Offset counts the offending byte; point at it.
			return &JSONError{Offset: max(se.Offset-1, 0), Msg: se.Error()}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return &JSONError{Offset: int64(len(data)), Msg: "unexpected end of JSON input"}
		}
		return err
	}
	// More is false before a stray ']' or '}' as at the end: any token
	// but the end of the input is data after the value.
	if off := dec.InputOffset(); !atEOF(dec) {
		for off < int64(len(data)) && strings.ContainsRune(" \t\r\n", rune(data[off])) {
			off++
		}
		return &JSONError{Offset: off, Msg: "unexpected data after the JSON value"}
	}
	if exact {
		*p = graph.ExactNumbers(*p)
	}
	return nil
}
