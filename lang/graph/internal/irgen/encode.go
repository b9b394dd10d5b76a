package irgen

import (
	"fmt"
	"strings"
)

// genEncode writes t's encoder, x.appendJSON(b): the JSON encoding/json
// writes of *x with HTML escaping off (encMarshal), field by field in
// declaration order, with its omitempty rules. The scalars, *Type and
// NamedValues are appended by the hand-written helpers of encode_fast.go.
// For a type with hash it also writes appendDefJSON, the encoding of its
// def fields (the encoding of stepDef).
func (g *gen) genEncode(t *Type) error {
	g.p("// appendJSON appends the encoding of x as encMarshal writes it.\nfunc (x *%s) appendJSON(b []byte) ([]byte, error) {\n", t.Name)
	if err := g.genEncodeFields(t, t.Fields); err != nil {
		return err
	}
	g.p("}\n\n")
	if t.Hash {
		var def []Field
		for _, f := range t.Fields {
			if f.Hash == "def" {
				def = append(def, f)
			}
		}
		g.p("// appendDefJSON appends the encoding of %sDefOf(x) as encMarshal writes it.\nfunc (x *%s) appendDefJSON(b []byte) ([]byte, error) {\n", lower(t.Name), t.Name)
		if err := g.genEncodeFields(t, def); err != nil {
			return err
		}
		g.p("}\n\n")
	}
	return nil
}

// genEncodeFields writes the body of an encoder of fields of t. The
// separator before a field is known when the generator writes it unless an
// omitempty field came before: then sep, set by the first field written,
// says whether a comma is due.
func (g *gen) genEncodeFields(t *Type, fields []Field) error {
	g.p("\tif x == nil {\n\t\treturn append(b, \"null\"...), nil\n\t}\n")
	if len(fields) == 0 {
		g.p("\treturn append(b, \"{}\"...), nil\n")
		return nil
	}
	g.p("\tvar err error\n\t_ = err\n")
	// known: whether a field was surely written before (then a comma is
	// due); maybe: whether one may have been (then the comma depends on
	// the variable more).
	known, maybe := false, false
	g.p("\tb = append(b, '{')\n")
	usesMore := false
	for _, f := range fields {
		if f.Omit && g.omittable(f.Type) {
			usesMore = true
		}
	}
	if usesMore {
		g.p("\tmore := false\n\t_ = more\n")
	}
	for _, f := range fields {
		key := fmt.Sprintf("%q:", f.JSONKey) // keys are plain ASCII (irgen checks)
		if strings.ContainsAny(f.JSONKey, "\"\\<>&") {
			return fmt.Errorf("irgen: %s.%s: the json key %q needs escaping", t.Name, f.Name, f.JSONKey)
		}
		v := "x." + f.Name
		omit := f.Omit && g.omittable(f.Type)
		if omit {
			g.p("\tif %s {\n", g.nonEmpty(f.Type, v))
		}
		switch {
		case known:
			g.p("\tb = append(b, %q...)\n", ","+key)
		case maybe:
			g.p("\tif more {\n\t\tb = append(b, ',')\n\t}\n\tb = append(b, %q...)\n", key)
		default:
			g.p("\tb = append(b, %q...)\n", key)
		}
		if err := g.encodeValue(t, f, v); err != nil {
			return err
		}
		if omit {
			if usesMore {
				g.p("\tmore = true\n")
			}
			g.p("\t}\n")
			maybe = true
		} else {
			if usesMore {
				g.p("\tmore = true\n")
			}
			known = true
		}
	}
	g.p("\treturn append(b, '}'), nil\n")
	return nil
}

// omittable reports whether encoding/json's omitempty can leave out a
// field of type typ (a struct value never is).
func (g *gen) omittable(typ string) bool {
	_, isStruct := g.byName[typ]
	return !isStruct
}

// nonEmpty is the condition under which encoding/json writes an omitempty
// field v of type typ.
func (g *gen) nonEmpty(typ, v string) string {
	switch {
	case typ == "string", strings.HasPrefix(typ, "[]"), strings.HasPrefix(typ, "map["), typ == "json.RawMessage", typ == "NamedValues":
		return "len(" + v + ") != 0"
	case typ == "bool":
		return v
	case typ == "int", typ == "int64", typ == "float64":
		return v + " != 0"
	case strings.HasPrefix(typ, "*"):
		return v + " != nil"
	}
	return "true"
}

// encodeValue writes the code appending the value v of field f.
func (g *gen) encodeValue(t *Type, f Field, v string) error {
	typ := f.Type
	switch typ {
	case "string":
		g.p("\tb = encAppendString(b, %s)\n", v)
		return nil
	case "bool":
		g.p("\tb = encAppendBool(b, %s)\n", v)
		return nil
	case "int", "int64":
		g.p("\tb = strconv.AppendInt(b, int64(%s), 10)\n", v)
		return nil
	case "float64":
		g.p("\tif b, err = encAppendFloat(b, %s); err != nil {\n\t\treturn b, err\n\t}\n", v)
		return nil
	case "[]string":
		g.p("\tb = encAppendStrings(b, %s)\n", v)
		return nil
	case "[]int":
		g.p("\tb = encAppendInts(b, %s)\n", v)
		return nil
	case "json.RawMessage":
		g.p("\tif b, err = encAppendRaw(b, %s); err != nil {\n\t\treturn b, err\n\t}\n", v)
		return nil
	case "*Type":
		g.p("\tb = %s.appendJSON(b)\n", v)
		return nil
	case "NamedValues":
		g.p("\tif b, err = %s.appendJSON(b); err != nil {\n\t\treturn b, err\n\t}\n", v)
		return nil
	}
	elem, how := elemOf(typ)
	if _, ok := g.byName[elem]; !ok {
		return fmt.Errorf("irgen: %s.%s: no encoder for the field type %s", t.Name, f.Name, typ)
	}
	switch {
	case how == "val", how == "ptr" && strings.HasPrefix(typ, "*"):
		if how == "val" {
			v = "&" + v
		}
		g.p("\tif b, err = (%s).appendJSON(b); err != nil {\n\t\treturn b, err\n\t}\n", v)
	case strings.HasPrefix(typ, "map[string]*"):
		g.p("\tif %s == nil {\n\t\tb = append(b, \"null\"...)\n\t} else {\n", v)
		g.p("\t\tb = append(b, '{')\n\t\tfor i, k := range encSortedKeys(%s) {\n", v)
		g.p("\t\t\tif i > 0 {\n\t\t\t\tb = append(b, ',')\n\t\t\t}\n\t\t\tb = append(encAppendString(b, k), ':')\n")
		g.p("\t\t\tif b, err = %s[k].appendJSON(b); err != nil {\n\t\t\t\treturn b, err\n\t\t\t}\n\t\t}\n\t\tb = append(b, '}')\n\t}\n", v)
	default: // []*T or []T
		ref := v + "[i]"
		if how == "elem" {
			ref = "&" + ref
		}
		g.p("\tif %s == nil {\n\t\tb = append(b, \"null\"...)\n\t} else {\n", v)
		g.p("\t\tb = append(b, '[')\n\t\tfor i := range %s {\n", v)
		g.p("\t\t\tif i > 0 {\n\t\t\t\tb = append(b, ',')\n\t\t\t}\n")
		g.p("\t\t\tif b, err = (%s).appendJSON(b); err != nil {\n\t\t\t\treturn b, err\n\t\t\t}\n\t\t}\n\t\tb = append(b, ']')\n\t}\n", ref)
	}
	return nil
}
