package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// maxExactDouble is 2^53: every integer of at most this magnitude is exact
// as a float64, and the first one past it that is not has 16 digits.
const maxExactDouble = 1 << 53

// UnmarshalJSON decodes b into *v as encoding/json does into an any, except
// that an integral JSON number of more than 2^53 in magnitude, which a
// float64 would round, becomes an int64 when it fits one and a uint64 when
// it fits only that (language.md §12). Every other number is a float64, as
// before, so values that were already exact keep their Go form. Text that
// holds no run of 16 digits cannot hold such a number and takes
// json.Unmarshal's path unchanged.
func UnmarshalJSON(b []byte, v *any) error {
	if !longDigitRun(b) {
		return json.Unmarshal(b, v)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return errors.New("invalid character after top-level value")
	}
	*v = ExactNumbers(x)
	return nil
}

// longDigitRun reports whether b holds 16 or more digits in a row.
func longDigitRun(b []byte) bool {
	n := 0
	for _, c := range b {
		if c >= '0' && c <= '9' {
			n++
			if n >= 16 {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}

// ExactNumbers replaces, in place, the json.Numbers of a value decoded with
// UseNumber by ExactNumber's form, and returns the value.
func ExactNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return ExactNumber(x)
	case []any:
		for i, e := range x {
			x[i] = ExactNumbers(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = ExactNumbers(e)
		}
	}
	return v
}

// ExactNumber is the Go form of a JSON number: an int64 or uint64 for an
// integer literal past 2^53 in magnitude that fits one, else a float64.
func ExactNumber(n json.Number) any {
	s := string(n)
	if IsIntLiteral(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if i > maxExactDouble || i < -maxExactDouble {
				return i
			}
			return float64(i)
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// IsIntLiteral reports whether s is an optional minus sign and digits.
func IsIntLiteral(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
