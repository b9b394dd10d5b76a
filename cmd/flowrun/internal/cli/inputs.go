package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
)

// readInputs builds a run's inputs from --inputs FILE.json (a JSON object)
// and the --input NAME=VALUE pairs, which win over the file. Each VALUE is
// converted by the input's declared type: a number, a bool (true or false),
// a string as written, and JSON for lists, maps and objects. Every value is
// then checked against its declared type, unknown names are refused, and
// required inputs (without a default) must be given, so that bad input is
// found before the store is opened. Defaults are left to the engine. The
// file may hold at most limit bytes.
func readInputs(g *graph.Graph, pairs []string, file string, limit int64) (map[string]any, error) {
	declared := map[string]*graph.Type{}
	var names []string
	for _, in := range g.Inputs {
		declared[in.Name] = in.Type
		names = append(names, in.Name)
	}
	sort.Strings(names)
	inputs := map[string]any{}
	if file != "" {
		fromFile, err := readInputsFile(file, limit)
		if err != nil {
			return nil, err
		}
		for k, v := range fromFile {
			if _, ok := declared[k]; !ok {
				return nil, unknownInput(g, k, names).hint(fmt.Sprintf("Remove %q from %s, or declare it with an input block.", k, file))
			}
			if err := graph.CheckValue(declared[k], v, k); err != nil {
				return nil, usageErrorf("%s: %v", file, err).
					hint(fmt.Sprintf("Give %q a value of type %s.", k, declared[k]))
			}
			inputs[k] = v
		}
	}
	for _, p := range pairs {
		k, raw, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usageErrorf("--input %q is not NAME=VALUE", p).
				hint("Write each input as --input NAME=VALUE, such as --input order_id=A-1.")
		}
		t, ok := declared[k]
		if !ok {
			return nil, unknownInput(g, k, names).hint(fmt.Sprintf("Remove --input %s, or declare it with an input block.", p))
		}
		v, err := convertInput(t, raw)
		if err != nil {
			return nil, usageErrorf("--input %s: %v", clipArg(p), err).
				hint(inputHint(k, t))
		}
		if err := graph.CheckValue(t, v, k); err != nil {
			return nil, usageErrorf("--input %s: %v", clipArg(p), err).hint(inputHint(k, t))
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
		flags := make([]string, len(missing))
		for i, m := range missing {
			flags[i] = fmt.Sprintf("--input %s=...", m)
		}
		return nil, usageErrorf("workflow %q needs %s %s, which %s no default",
			g.Workflow, pluralWord(len(missing), "input", "inputs"), quoteList(missing), pluralWord(len(missing), "has", "have")).
			hint("Pass " + strings.Join(flags, " ") + ", or put the values in a JSON file given with --inputs.")
	}
	return inputs, nil
}

func unknownInput(g *graph.Graph, k string, names []string) *exitError {
	if len(names) == 0 {
		return usageErrorf("workflow %q has no input %q; it declares no inputs", g.Workflow, k)
	}
	return usageErrorf("workflow %q has no input %q; it declares %s", g.Workflow, k, quoteList(names))
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func inputHint(name string, t *graph.Type) string {
	switch t.Kind {
	case graph.KindNumber:
		return fmt.Sprintf("Input %q is a number: pass it as --input %s=10 or --input %s=2.5.", name, name, name)
	case graph.KindInt:
		return fmt.Sprintf("Input %q is a whole number: pass it as --input %s=10.", name, name)
	case graph.KindBool:
		return fmt.Sprintf("Input %q is a bool: pass --input %s=true or --input %s=false.", name, name, name)
	case graph.KindString:
		return fmt.Sprintf("Input %q is a string: pass --input %s=TEXT.", name, name)
	}
	return fmt.Sprintf("Input %q is %s: pass it as JSON, such as --input '%s=%s'.", name, t, name, jsonExample(t))
}

func jsonExample(t *graph.Type) string {
	switch t.Kind {
	case graph.KindList:
		return "[" + jsonExample(t.Elem) + "]"
	case graph.KindMap:
		return `{"key": ` + jsonExample(t.Elem) + "}"
	case graph.KindObject:
		names := make([]string, 0, len(t.Fields))
		for n := range t.Fields {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%q: %s", n, jsonExample(t.Fields[n]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case graph.KindNumber, graph.KindInt:
		return "1"
	case graph.KindBool:
		return "true"
	}
	return `"text"`
}

// clipArg shortens a command-line argument quoted in a message.
func clipArg(s string) string {
	const most = 60
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d bytes)", len(s))
}

// convertInput turns the text of --input NAME=VALUE into a value of type t.
// Text that opens more than lang.MaxValueDepth lists or objects is refused
// for every type but string, valid JSON or not: for type any it would
// otherwise be kept as a string when encoding/json gives up on it.
func convertInput(t *graph.Type, raw string) (any, error) {
	if t.Kind != graph.KindString {
		if off := graph.JSONDepthOver([]byte(raw), graph.MaxValueDepth); off >= 0 {
			return nil, fmt.Errorf("the value nests deeper than %d levels of lists and objects (at byte %d); flatten it", graph.MaxValueDepth, off+1)
		}
	}
	switch t.Kind {
	case graph.KindString:
		return raw, nil
	case graph.KindNumber, graph.KindInt:
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
		if err := json.Unmarshal([]byte(raw), &v); err == nil {
			return v, nil
		}
		return raw, nil
	}
	var v any
	if err := decodeJSON([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("the value is not valid JSON for %s: %v", t, err)
	}
	return v, nil
}

// readInputsFile reads a JSON object of inputs, of at most limit bytes. A
// syntax error names the file, line and column.
func readInputsFile(file string, limit int64) (map[string]any, error) {
	data, err := lang.ReadFileMax(file, limit)
	var big *lang.FileTooLargeError
	if errors.As(err, &big) {
		return nil, usageErrorf("the inputs file %s is larger than %s, the most flowrun reads of it", file, lang.SizeText(limit)).
			hint("Pass a smaller file, or raise the limit with --max-file-size.")
	}
	if err != nil {
		return nil, usageErrorf("cannot read the inputs file %s: %v", file, unwrapPathError(err)).
			hint("Pass --inputs with the path of a JSON file holding an object of inputs.")
	}
	// The file is an object of inputs: one level more than a value.
	if off := graph.JSONDepthOver(data, graph.MaxValueDepth+1); off >= 0 {
		line, col := lineCol(data, int64(off))
		return nil, usageErrorf("%s:%d:%d: an input in the inputs file nests deeper than %d levels of lists and objects", file, line, col, graph.MaxValueDepth).
			hint("Flatten the value: a value flowrun stores nests at most " + strconv.Itoa(graph.MaxValueDepth) + " levels.")
	}
	var v any
	if err := decodeJSON(data, &v); err != nil {
		var je *jsonError
		if errors.As(err, &je) {
			line, col := lineCol(data, je.offset)
			return nil, usageErrorf("%s:%d:%d: the inputs file is not valid JSON: %v", file, line, col, je).
				hint(`Fix the JSON; the file must hold one object, such as {"order_id": "A-1", "amount": 10}.`)
		}
		return nil, usageErrorf("%s: the inputs file is not valid JSON: %v", file, err).
			hint(`Fix the JSON; the file must hold one object, such as {"order_id": "A-1", "amount": 10}.`)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, usageErrorf("%s holds %s, not a JSON object of inputs", file, jsonKind(v)).
			hint(`Write the inputs as one object, such as {"order_id": "A-1", "amount": 10}.`)
	}
	return obj, nil
}

// jsonError is a JSON syntax error with the byte offset where it was found.
type jsonError struct {
	offset int64
	msg    string
}

func (j *jsonError) Error() string { return j.msg }

// decodeJSON decodes exactly one JSON value, refusing trailing data. A
// syntax error is a *jsonError.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			// Offset counts the offending byte; point at it.
			return &jsonError{offset: max(se.Offset-1, 0), msg: se.Error()}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return &jsonError{offset: int64(len(data)), msg: "unexpected end of JSON input"}
		}
		return err
	}
	if dec.More() {
		off := dec.InputOffset()
		for off < int64(len(data)) && strings.ContainsRune(" \t\r\n", rune(data[off])) {
			off++
		}
		return &jsonError{offset: off, msg: "unexpected data after the JSON value"}
	}
	return nil
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a bool"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
