package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/store"
)

// feItems is a foreach step's item list held as its JSON, once: an item
// is decoded when it is read (an item that begins, a dead letter), never
// the whole list. The list of a million small items takes a few bytes an
// item as JSON and tens as decoded values, and a decoded copy would be
// held for as long as the step runs.
//
// marks[k] is the offset in raw of item k*feStride, so reading item i
// scans at most feStride-1 items from the mark before it.
type feItems struct {
	raw   json.RawMessage // the list's JSON, valid (it was decoded or encoded before)
	marks []int32
	n     int
}

// feStride is the number of items between two marks.
const feStride = 64

// indexItems indexes the JSON list raw. It fails when raw is not a list,
// or is too long to index (offsets are int32: 2 GiB, above any input or
// output limit).
func indexItems(raw json.RawMessage) (*feItems, error) {
	if len(raw) > 1<<31-1 {
		return nil, errors.New("the item list is larger than 2 GiB")
	}
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, errors.New("the recorded items are not a JSON list")
	}
	it := &feItems{raw: raw}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return it, nil
	}
	for i < len(raw) {
		if it.n%feStride == 0 {
			it.marks = append(it.marks, int32(i))
		}
		end, err := skipValue(raw, i)
		if err != nil {
			return nil, err
		}
		it.n++
		i = skipSpace(raw, end)
		if i >= len(raw) {
			break
		}
		if raw[i] == ']' {
			return it, nil
		}
		if raw[i] != ',' {
			return nil, fmt.Errorf("the recorded items are not a JSON list: %q at offset %d", raw[i], i)
		}
		i = skipSpace(raw, i+1)
	}
	return nil, errors.New("the recorded items are not a JSON list: it does not end")
}

// len is the number of items.
func (f *feItems) len() int { return f.n }

// rawAt returns the JSON of item i (0 <= i < len).
func (f *feItems) rawAt(i int) json.RawMessage {
	p := int(f.marks[i/feStride])
	for k := i - i%feStride; ; k++ {
		end, _ := skipValue(f.raw, p) // indexItems walked these already
		if k == i {
			return f.raw[p:end:end]
		}
		p = skipSpace(f.raw, end)
		p = skipSpace(f.raw, p+1) // past the comma
	}
}

// at returns item i decoded (as decodeJSON does: what the item's unit
// and a dead letter see).
func (f *feItems) at(i int) any {
	return decodeJSON(f.rawAt(i))
}

// skipSpace returns the first offset from i of b that is not JSON white
// space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the offset just past the JSON value that begins at
// b[i] (no white space before it).
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("the recorded items are not a JSON list: a value is missing")
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '[', '{':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			case '[', '{':
				depth++
			case ']', '}':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errors.New("the recorded items are not a JSON list: a value does not end")
	}
	for i < len(b) && !strings.ContainsRune(",]} \t\r\n", rune(b[i])) {
		i++
	}
	return i, nil
}

// skipString returns the offset just past the JSON string that begins at
// b[i] (a quote).
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errors.New("the recorded items are not a JSON list: a string does not end")
}

// recordedItems is the JSON of a foreach step's items in its State. It is
// written with the State and skipped when a State is decoded: the items
// are read where they are, in the row's State (itemsOf), so that decoding
// the State of a running foreach (for its wait, at a park) never copies
// its list.
type recordedItems json.RawMessage

// MarshalJSON implements json.Marshaler: the list as it is.
func (m recordedItems) MarshalJSON() ([]byte, error) { return m, nil }

// UnmarshalJSON implements json.Unmarshaler: it keeps nothing (see the
// type).
func (*recordedItems) UnmarshalJSON([]byte) error { return nil }

// itemsOf returns the items a foreach step recorded when it began, from
// its row's State: the list the State holds, or the run input the State
// names (the run's inputs, inputs, never change, so the list is not
// stored again; see runner.evalItems). A State without items has none.
func itemsOf(state, inputs json.RawMessage) (*feItems, error) {
	var st rowState
	if len(state) > 0 {
		if err := json.Unmarshal(state, &st); err != nil {
			return nil, fmt.Errorf("decoding the foreach's state: %w", err)
		}
	}
	if st.ItemsInput != "" {
		raw, ok := jsonField(inputs, st.ItemsInput)
		if !ok {
			return nil, fmt.Errorf("the run has no input %q, which the foreach's items were recorded as", st.ItemsInput)
		}
		return indexItems(raw)
	}
	raw, ok := jsonField(state, "items")
	if !ok {
		return &feItems{}, nil
	}
	return indexItems(raw)
}

// jsonField returns the JSON of member key of the JSON object obj (its
// last, as decoding keeps), without decoding the object.
func jsonField(obj json.RawMessage, key string) (json.RawMessage, bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, false
	}
	var found json.RawMessage
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		kend, err := skipString(obj, i)
		if err != nil {
			return nil, false
		}
		k := string(obj[i+1 : kend-1])
		if strings.IndexByte(k, '\\') >= 0 {
			if json.Unmarshal(obj[i:kend], &k) != nil {
				return nil, false
			}
		}
		i = skipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return nil, false
		}
		i = skipSpace(obj, i+1)
		vend, err := skipValue(obj, i)
		if err != nil {
			return nil, false
		}
		if k == key {
			found = obj[i:vend:vend]
		}
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return found, found != nil
}

// inputRef returns the input NAME of a foreach items expression that is
// exactly input.NAME (in canonical form).
func inputRef(cel string) (string, bool) {
	name, ok := strings.CutPrefix(cel, "input.")
	if !ok || name == "" {
		return "", false
	}
	for i, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return "", false
		}
	}
	return name, true
}

// ItemTotal returns how many items the foreach step whose own row is row
// recorded when it evaluated its items: all of them, started or not (the
// item rows exist only for the items started). inputs are the run's
// inputs (items recorded as an input's list are read from them). It is 0
// before the items are evaluated. Views use it to show done/total of all
// items.
func ItemTotal(row store.Step, inputs json.RawMessage) (int, error) {
	it, err := itemsOf(row.State, inputs)
	if err != nil {
		return 0, err
	}
	return it.len(), nil
}
