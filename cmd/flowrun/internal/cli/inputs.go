package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
)

// readInputs builds a run's inputs from --inputs FILE.json (a JSON object,
// of at most limit bytes) and the --input NAME=VALUE pairs, which win over
// the file. The engine converts and checks them against the workflow's
// declared inputs (interp.ConvertInputs), before the store is opened; this
// reads the file and words the problems for the flags.
func readInputs(ctx context.Context, g *graph.Graph, pairs []string, file string, limit int64) (map[string]any, error) {
	// An input given twice is a mistake, not an override: which value was
	// meant cannot be told.
	given := map[string]string{}
	for _, p := range pairs {
		name, _, ok := strings.Cut(p, "=")
		if !ok {
			continue // ConvertInputs says it is not NAME=VALUE
		}
		if first, dup := given[name]; dup {
			return nil, usageErrorf("--input %s is given twice (--input %s and --input %s)", name, clipArg(first), clipArg(p)).
				hint("Give each input once.")
		}
		given[name] = p
	}
	var fromFile map[string]any
	if file != "" {
		var err error
		if fromFile, err = readInputsFile(file, limit); err != nil {
			return nil, err
		}
	}
	inputs, err := interp.ConvertInputs(ctx, interp.ConvertInputsParams{Graph: g, Object: fromFile, Pairs: pairs})
	var ce *interp.ConvertError
	if !errors.As(err, &ce) {
		return inputs, err
	}
	switch {
	case ce.Problem == interp.InputNotPair:
		return nil, usageErrorf("--input %q is not NAME=VALUE", ce.Pair).
			hint("Write each input as --input NAME=VALUE, such as --input order_id=A-1.")
	case ce.Problem == interp.InputUnknown && ce.Pair == "":
		return nil, unknownInput(ce).hint(fmt.Sprintf("Remove %q from %s, or declare it with an input block.", ce.Name, file))
	case ce.Problem == interp.InputUnknown:
		return nil, unknownInput(ce).hint(fmt.Sprintf("Remove --input %s, or declare it with an input block.", ce.Pair))
	case ce.Problem == interp.InputBadValue && ce.Pair == "":
		return nil, usageErrorf("%s: %v", file, ce.Err).
			hint(fmt.Sprintf("Give %q a value of type %s.", ce.Name, ce.Type))
	case ce.Problem == interp.InputBadValue:
		return nil, usageErrorf("--input %s: %v", clipArg(ce.Pair), ce.Err).hint(inputHint(ce.Name, ce.Type))
	}
	missing := ce.Missing
	flags := make([]string, len(missing))
	for i, m := range missing {
		flags[i] = fmt.Sprintf("--input %s=...", m)
	}
	return nil, usageErrorf("%s", ce.Error()).
		hint("Pass " + strings.Join(flags, " ") + ", or put the values in a JSON file given with --inputs.")
}

// checkPairs refuses an --input that is not NAME=VALUE before the files
// are read: in `--input name Ada` the flag takes "name" and Ada is read as
// a workflow file, whose "does not exist" would hide the mistake. When a
// path named does not exist, the hint joins the two as they were meant.
func checkPairs(pairs, paths []string) error {
	for _, p := range pairs {
		name, _, ok := strings.Cut(p, "=")
		if ok && name != "" {
			continue
		}
		hint := "Write each input as --input NAME=VALUE, such as --input order_id=A-1."
		if !ok && name != "" {
			for _, path := range paths {
				if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
					hint = fmt.Sprintf("Write the input as one argument, NAME=VALUE: --input %s=%s (%s is no file to read).", name, path, path)
					break
				}
			}
		}
		return usageErrorf("--input %q is not NAME=VALUE", clipArg(p)).hint(hint)
	}
	return nil
}

func unknownInput(ce *interp.ConvertError) *exitError {
	return usageErrorf("%s", ce.Error())
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
	if err := interp.DecodeJSONValue(data, &v); err != nil {
		var je *interp.JSONError
		if errors.As(err, &je) {
			line, col := lineCol(data, je.Offset)
			return nil, usageErrorf("%s:%d:%d: the inputs file is not valid JSON: %v", file, line, col, je).
				hint(`Fix the JSON; the file must hold one object, such as {"order_id": "A-1", "amount": 10}.`)
		}
		return nil, usageErrorf("%s: the inputs file is not valid JSON: %v", file, err).
			hint(`Fix the JSON; the file must hold one object, such as {"order_id": "A-1", "amount": 10}.`)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, usageErrorf("%s holds %s, not a JSON object of inputs", file, graph.JSONKind(v)).
			hint(`Write the inputs as one object, such as {"order_id": "A-1", "amount": 10}.`)
	}
	return obj, nil
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
