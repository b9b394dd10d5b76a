package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
)

// readBody reads the whole request body, at most the server's MaxBody
// (http.MaxBytesReader, set by wrap): a larger one is a 413.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, Problemf(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes, the most this server reads", mbe.Limit)
	}
	if errors.Is(err, errBodyTimeout) {
		return nil, Problemf(http.StatusRequestTimeout, "the request body did not arrive in time; send it whole without pausing")
	}
	if err != nil {
		return nil, Problemf(http.StatusBadRequest, "reading the request body: %v", err)
	}
	return b, nil
}

// decodeBody decodes a JSON object request body into v, a pointer to a
// struct: UTF-8 text (encoding/json would turn other bytes into U+FFFD
// unseen), one object, no unknown field, nothing after it, nested at most
// graph.MaxValueDepth levels below its fields. An empty body is the empty
// object; null is not (encoding/json would leave v as it is, so a null
// would pass for {}). Every problem is a 400 (or 413) that names the byte
// and, for an unknown or mistyped field, the field.
func decodeBody(b []byte, v any) error {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil
	}
	if isNull(trimmed) {
		return Problemf(http.StatusBadRequest, "the request body is null, not a JSON object; send %s", objectExample(v))
	}
	if off := interp.InvalidUTF8At(b); off >= 0 {
		return Problemf(http.StatusBadRequest, "the request body is not valid UTF-8 (at byte %d); JSON text is UTF-8", off+1)
	}
	if off := graph.JSONDepthOver(b, graph.MaxValueDepth+2); off >= 0 {
		return Problemf(http.StatusBadRequest, "the request body nests deeper than %d levels of lists and objects (at byte %d); flatten it", graph.MaxValueDepth, off+1)
	}
	if err := strictBody(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	// Numbers in the body's free-form values (inputs) are read as
	// written and then made exact (graph.ExactNumbers): an integer past
	// 2^53 keeps every digit (language.md §12).
	dec.UseNumber()
	err := dec.Decode(v)
	if err == nil {
		if err := exactNumbers(reflect.ValueOf(v)); err != nil {
			return err
		}
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
	case errors.As(err, &se):
		return Problemf(http.StatusBadRequest, "the request body is not valid JSON: %v (at byte %d)", se, se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return Problemf(http.StatusBadRequest, "the request body is not valid JSON: it ends early")
	case errors.As(err, &te) && te.Field == "":
		return Problemf(http.StatusBadRequest, "the request body is %s, not a JSON object", kindOfJSON(te.Value))
	case errors.As(err, &te):
		return &Problem{Status: http.StatusBadRequest, Field: te.Field,
			Detail: fmt.Sprintf("the request body's field %q is %s, not %s", te.Field, kindOfJSON(te.Value), goKind(te.Type.String()))}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		if fields := fieldNames(v); fields != "" {
			return &Problem{Status: http.StatusBadRequest, Field: name,
				Detail: fmt.Sprintf("the request body has an unknown field %q; the fields are %s", name, fields)}
		}
		return &Problem{Status: http.StatusBadRequest, Field: name,
			Detail: fmt.Sprintf("the request body has an unknown field %q; this request takes no fields: send {} or no body", name)}
	default:
		return Problemf(http.StatusBadRequest, "the request body is not valid: %v", err)
	}
	if dec.More() {
		return Problemf(http.StatusBadRequest, "the request body has data after its JSON object (at byte %d)", dec.InputOffset()+1)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Problemf(http.StatusBadRequest, "the request body has data after its JSON object (at byte %d)", dec.InputOffset()+1)
	}
	return nil
}

// exactNumbers makes the json.Numbers UseNumber left in v's free-form
// values (fields of type any, map[string]any, []any, and the structs and
// slices that hold them) exact Go numbers, in place. A number no float64
// holds (1e400) is a 400, as encoding/json refuses it.
func exactNumbers(v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return exactNumbers(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				if err := exactNumbers(v.Field(i)); err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			if err := exactNumbers(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.Interface {
			for _, k := range v.MapKeys() {
				if e := v.MapIndex(k); !e.IsNil() {
					if err := numbersInRange(e.Interface()); err != nil {
						return err
					}
					v.SetMapIndex(k, reflect.ValueOf(graph.ExactNumbers(e.Interface())))
				}
			}
		}
	case reflect.Interface:
		if !v.IsNil() && v.CanSet() {
			if err := numbersInRange(v.Interface()); err != nil {
				return err
			}
			v.Set(reflect.ValueOf(graph.ExactNumbers(v.Interface())))
		}
	}
	return nil
}

// numbersInRange refuses a JSON number in x that no float64 holds.
func numbersInRange(x any) error {
	switch x := x.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(x), 64); err != nil {
			return Problemf(http.StatusBadRequest, "the request body holds the number %.40s, which is out of range for a JSON number", string(x))
		}
	case []any:
		for _, e := range x {
			if err := numbersInRange(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range x {
			if err := numbersInRange(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// strictBody is a 400 for JSON encoding/json would accept but change
// (interp.StrictJSON: a lone surrogate, a key twice).
func strictBody(b []byte) error {
	var se *interp.StrictJSONError
	if err := interp.StrictJSON(b); errors.As(err, &se) {
		return &Problem{Status: http.StatusBadRequest, Field: se.Key, Detail: "the request body is refused: " + se.Msg}
	}
	return nil
}

// kindOfJSON names the JSON kind encoding/json reports in an
// UnmarshalTypeError ("number", "string", "array", "object", "bool").
func kindOfJSON(v string) string {
	switch v {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "number":
		return "a number"
	case "bool":
		return "a bool"
	case "string":
		return "a string"
	}
	return v
}

// goKind names a Go type of a request field as a JSON kind.
func goKind(t string) string {
	switch {
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "struct"):
		return "an object"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return t
}

// isNull reports whether a trimmed body is the JSON null, alone or with
// more after it (which is no object either).
func isNull(trimmed []byte) bool {
	if !bytes.HasPrefix(trimmed, []byte("null")) {
		return false
	}
	rest := trimmed[len("null"):]
	return len(rest) == 0 || !isJSONNameByte(rest[0])
}

// isJSONNameByte is a byte that would continue a bare word (nullx is
// not null but invalid JSON, which the decoder words).
func isJSONNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// objectExample is what a client should send instead of a body that is
// not an object: {} or no body when the request takes no fields, else
// an object of its fields.
func objectExample(v any) string {
	if fieldNames(v) == "" {
		return "{} or no body"
	}
	return "an object (or no body); its fields are " + fieldNames(v)
}

// fieldNames lists the JSON field names of the struct v points to, ""
// for a struct without fields.
func fieldNames(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return "?"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	return quoteSorted(names)
}

// decodeValue decodes a body that is any one JSON value (a signal's
// data): the same checks as decodeBody but no shape.
func decodeValue(b []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	if off := graph.JSONDepthOver(b, graph.MaxValueDepth); off >= 0 {
		return nil, Problemf(http.StatusBadRequest, "the request body nests deeper than %d levels of lists and objects (at byte %d); flatten it", graph.MaxValueDepth, off+1)
	}
	if off := interp.InvalidUTF8At(b); off >= 0 {
		return nil, Problemf(http.StatusBadRequest, "the request body is not valid UTF-8 (at byte %d); JSON text is UTF-8", off+1)
	}
	if err := strictBody(b); err != nil {
		return nil, err
	}
	var v any
	if err := interp.DecodeJSONValue(b, &v); err != nil {
		var je *interp.JSONError
		if errors.As(err, &je) {
			return nil, Problemf(http.StatusBadRequest, "the request body is not valid JSON: %s (at byte %d)", je.Msg, je.Offset+1)
		}
		return nil, Problemf(http.StatusBadRequest, "the request body is not valid JSON: %v", err)
	}
	return json.RawMessage(bytes.TrimSpace(b)), nil
}
