package sdk

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// DecodeConfig decodes the JSON object config into v, a pointer to the
// plugin's config struct, and returns every problem it finds, each with the
// path of the offending field:
//
//	drivers[1].endpoit: unknown field
//	timeouts.runtime: want a string, got number
//
// It is stricter than encoding/json: field names must match exactly (the
// `json` tag, or the Go name when there is none), unknown and duplicate
// fields are errors, and a null leaves the field as it was. Fields the
// config does not mention keep their value, so set defaults in v before the
// call. Types that implement json.Unmarshaler or encoding.TextUnmarshaler
// (such as Duration) decode themselves; their error becomes the message.
//
// An empty config is the empty object. On errors, v may be partly written:
// decode into a fresh value and keep the config in effect until the new one
// is accepted.
func DecodeConfig(config []byte, v any) []FieldError {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return []FieldError{{Message: fmt.Sprintf("cannot decode into %T: want a non-nil pointer", v)}}
	}
	if len(bytes.TrimSpace(config)) == 0 {
		config = []byte("{}")
	}
	if err := json.Unmarshal(config, new(any)); err != nil {
		return []FieldError{{Message: fmt.Sprintf("invalid JSON: %v", err)}}
	}
	var d decoder
	d.value("", config, rv.Elem())
	return d.errs
}

// FieldErrors collects the problems a plugin finds while validating its
// config, after DecodeConfig accepted its shape.
type FieldErrors []FieldError

// Addf records that the field at path (e.g. "drivers[1].name") is wrong.
func (e *FieldErrors) Addf(path, format string, args ...any) {
	*e = append(*e, FieldError{Field: path, Message: fmt.Sprintf(format, args...)})
}

// decoder walks a JSON value and a Go value side by side, collecting errors.
type decoder struct {
	errs []FieldError
}

func (d *decoder) fail(path, format string, args ...any) {
	d.errs = append(d.errs, FieldError{Field: path, Message: fmt.Sprintf(format, args...)})
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// value decodes raw, one valid JSON value, into v, which is settable.
func (d *decoder) value(path string, raw []byte, v reflect.Value) {
	got := jsonKind(raw)
	if got == "null" {
		return
	}
	if v.Kind() != reflect.Pointer && v.CanAddr() {
		switch p := v.Addr(); {
		case p.Type().Implements(jsonUnmarshaler):
			if err := p.Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
				d.fail(path, "%v", err)
			}
			return
		case p.Type().Implements(textUnmarshaler):
			var s string
			if got != "string" || json.Unmarshal(raw, &s) != nil {
				d.fail(path, "want a string, got %s", got)
				return
			}
			if err := p.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
				d.fail(path, "%v", err)
			}
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.value(path, raw, v.Elem())
	case reflect.Interface:
		if v.NumMethod() != 0 {
			d.fail(path, "cannot decode into Go type %s", v.Type())
			return
		}
		var x any
		_ = json.Unmarshal(raw, &x) // raw is valid JSON
		v.Set(reflect.ValueOf(x))
	case reflect.Struct:
		d.object(path, raw, got, v)
	case reflect.Map:
		d.mapping(path, raw, got, v)
	case reflect.Slice, reflect.Array:
		d.array(path, raw, got, v)
	case reflect.String:
		if got != "string" {
			d.fail(path, "want a string, got %s", got)
			return
		}
		var s string
		_ = json.Unmarshal(raw, &s)
		v.SetString(s)
	case reflect.Bool:
		if got != "boolean" {
			d.fail(path, "want a boolean, got %s", got)
			return
		}
		v.SetBool(raw[0] == 't')
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(raw), 10, v.Type().Bits())
		d.number(path, got, raw, "an integer", err, func() { v.SetInt(n) })
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(string(raw), 10, v.Type().Bits())
		d.number(path, got, raw, "a non-negative integer", err, func() { v.SetUint(n) })
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(string(raw), v.Type().Bits())
		d.number(path, got, raw, "a number", err, func() { v.SetFloat(n) })
	default:
		d.fail(path, "cannot decode into Go type %s", v.Type())
	}
}

// number reports a parse error of a JSON number, or calls set.
func (d *decoder) number(path, got string, raw []byte, want string, err error, set func()) {
	switch {
	case got != "number":
		d.fail(path, "want %s, got %s", want, got)
	case errors.Is(err, strconv.ErrRange):
		d.fail(path, "%s is out of range", raw)
	case err != nil:
		d.fail(path, "want %s, got %s", want, raw)
	default:
		set()
	}
}

func (d *decoder) object(path string, raw []byte, got string, v reflect.Value) {
	if got != "object" {
		d.fail(path, "want an object, got %s", got)
		return
	}
	fields := structFields(v.Type())
	for _, m := range members(raw) {
		p := joinField(path, m.key)
		switch index, ok := fields[m.key]; {
		case m.duplicate:
			d.fail(p, "duplicate field")
		case !ok:
			d.fail(p, "unknown field")
		default:
			d.value(p, m.raw, v.FieldByIndex(index))
		}
	}
}

func (d *decoder) mapping(path string, raw []byte, got string, v reflect.Value) {
	if v.Type().Key().Kind() != reflect.String {
		d.fail(path, "cannot decode into Go type %s", v.Type())
		return
	}
	if got != "object" {
		d.fail(path, "want an object, got %s", got)
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, m := range members(raw) {
		p := joinKey(path, m.key)
		if m.duplicate {
			d.fail(p, "duplicate key")
			continue
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(reflect.ValueOf(m.key).Convert(v.Type().Key())); old.IsValid() {
			elem.Set(old)
		}
		d.value(p, m.raw, elem)
		v.SetMapIndex(reflect.ValueOf(m.key).Convert(v.Type().Key()), elem)
	}
}

func (d *decoder) array(path string, raw []byte, got string, v reflect.Value) {
	if got != "array" {
		d.fail(path, "want an array, got %s", got)
		return
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems)
	if v.Kind() == reflect.Array {
		if len(elems) > v.Len() {
			d.fail(path, "want at most %d elements, got %d", v.Len(), len(elems))
			return
		}
	} else {
		v.Set(reflect.MakeSlice(v.Type(), len(elems), len(elems)))
	}
	for i, e := range elems {
		d.value(fmt.Sprintf("%s[%d]", path, i), e, v.Index(i))
	}
}

// member is one name/value pair of a JSON object, in document order.
type member struct {
	key       string
	raw       json.RawMessage
	duplicate bool
}

// members splits a valid JSON object into its members.
func members(raw []byte) []member {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil
	}
	var out []member
	seen := map[string]bool{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		key, ok := tok.(string)
		if err != nil || !ok { // '}'
			return out
		}
		var m json.RawMessage
		if err := dec.Decode(&m); err != nil {
			return out
		}
		out = append(out, member{key: key, raw: m, duplicate: seen[key]})
		seen[key] = true
	}
}

// structFields maps the JSON names of t's fields to their index, promoting
// the fields of embedded structs as encoding/json does.
func structFields(t reflect.Type) map[string][]int {
	fields := map[string][]int{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
			continue
		}
		if len(f.Index) > 1 && !promoted(t, f.Index) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		if _, taken := fields[name]; !taken {
			fields[name] = f.Index
		}
	}
	return fields
}

// promoted reports whether the field at index is reached only through
// untagged, embedded, non-pointer structs.
func promoted(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		f := t.Field(i)
		if !f.Anonymous || f.Type.Kind() != reflect.Struct || f.Tag.Get("json") != "" {
			return false
		}
		t = f.Type
	}
	return true
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// joinKey names a map entry: "labels.app", or `labels["a.b"]` when the key
// would not read as one path element.
func joinKey(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\"' ") {
		return path + "[" + strconv.Quote(key) + "]"
	}
	return joinField(path, key)
}

// jsonKind names the kind of a valid JSON value, for messages.
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
