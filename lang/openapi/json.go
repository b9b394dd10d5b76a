package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A JSON document is read with encoding/json rather than as YAML: JSON is
// YAML's flow style but for a few details YAML parsers refuse (the escape
// \/, which many JSON writers use, and tabs before a line's first token).

// maxJSONDepth bounds how deeply a JSON document nests.
const maxJSONDepth = 10000

// looksJSON reports whether a document starts like a JSON object or list.
func looksJSON(src []byte) bool {
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	src = bytes.TrimLeft(src, " \t\r\n")
	return len(src) > 0 && (src[0] == '{' || src[0] == '[')
}

// jsonNode reads a JSON document into the nodes a YAML parser would make
// of it, with their lines.
func jsonNode(src []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	lc := lineCounter{src: src, line: 1}
	var root *yaml.Node
	var stack []*yaml.Node
	for {
		start := skipSeparators(src, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			line := lc.at(start)
			var se *json.SyntaxError
			if errors.As(err, &se) {
				line = lc.at(int(se.Offset))
			}
			return nil, &jsonSyntaxError{&Error{Line: line, Msg: strings.TrimPrefix(err.Error(), "json: ")}}
		}
		line := lc.at(start)
		var n *yaml.Node
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Line: line}
			case '[':
				n = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line}
			default: // } or ]
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			n = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: line}
		case json.Number:
			tag := "!!int"
			if strings.ContainsAny(string(v), ".eE") {
				tag = "!!float"
			}
			n = &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(v), Line: line}
		case bool:
			n = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(v), Line: line}
		case nil:
			n = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: line}
		}
		switch {
		case len(stack) > 0:
			top := stack[len(stack)-1]
			top.Content = append(top.Content, n)
		case root != nil:
			return nil, &Error{Line: line, Msg: "the document holds more than one JSON value"}
		default:
			root = n
		}
		if n.Kind != yaml.ScalarNode {
			if len(stack) >= maxJSONDepth {
				return nil, &Error{Line: line, Msg: fmt.Sprintf("the document nests more than %d deep", maxJSONDepth)}
			}
			stack = append(stack, n)
		}
	}
	if root == nil {
		return nil, &Error{Msg: "the document is empty"}
	}
	return root, nil
}

// jsonSyntaxError is a document that is not JSON, which may still be
// YAML.
type jsonSyntaxError struct{ err *Error }

func (e *jsonSyntaxError) Error() string { return e.err.Error() }

// skipSeparators returns the offset of the next token at or after i.
func skipSeparators(src []byte, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// lineCounter turns offsets, which only grow, into lines.
type lineCounter struct {
	src  []byte
	off  int
	line int
}

func (lc *lineCounter) at(off int) int {
	off = min(off, len(lc.src))
	if off < lc.off { // an error's offset may lie before the last token's
		return 1 + bytes.Count(lc.src[:off], []byte("\n"))
	}
	lc.line += bytes.Count(lc.src[lc.off:off], []byte("\n"))
	lc.off = off
	return lc.line
}
