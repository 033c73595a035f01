package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
)

// maxNodes bounds the nodes visited in one document, aliases expanded, so an
// alias bomb costs an error rather than the host's memory.
const maxNodes = 100_000

// Load reads the host config at path, parses it, and validates it against
// the real filesystem. The error is a *ValidationError listing every problem
// found, or an error reading the file.
func Load(path string) (*HostConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading host config: %w", err)
	}
	c, p := decode(data, path)
	if c != nil {
		c.check(p, os.Stat)
	}
	if err := p.err(path); err != nil {
		return nil, err
	}
	return c, nil
}

// Parse decodes a host config strictly, fills in defaults and checks every
// rule that does not need the filesystem. source names the document in
// errors. Any error is a *ValidationError listing every problem found.
func Parse(data []byte, source string) (*HostConfig, error) {
	c, p := decode(data, source)
	if c != nil {
		c.check(p, nil)
	}
	if err := p.err(source); err != nil {
		return nil, err
	}
	return c, nil
}

// decode turns a document into a HostConfig with defaults applied. It
// returns a nil config only when the document as a whole is unusable.
func decode(data []byte, source string) (*HostConfig, *problems) {
	p := &problems{}
	root := parseDocument(data, p)
	if root == nil {
		return nil, p
	}
	d := &decoder{p: p, lines: map[string]int{"": root.Line}, nulls: map[string]bool{}, budget: maxNodes}
	if root.Kind != yaml.MappingNode {
		p.add("", root.Line, nil, "want a %s mapping, got %s", Kind, describe(root))
		return nil, p
	}
	c := &HostConfig{}
	d.value(root, reflect.ValueOf(c).Elem(), "")
	c.meta = &meta{source: source, lines: d.lines, nulls: d.nulls}
	c.applyDefaults()
	return c, p
}

// parseDocument parses data as exactly one YAML document and returns its
// root node, or nil after reporting why it cannot.
func parseDocument(data []byte, p *problems) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.add("", 0, nil, "empty document; want a %s", Kind)
		} else {
			notYAML(p, err)
		}
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		notYAML(p, err)
		return nil
	default:
		p.add("", next.Line, nil, "more than one YAML document; want one")
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		p.add("", 0, nil, "empty document; want a %s", Kind)
		return nil
	}
	return doc.Content[0]
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// notYAML reports a syntax error, moving the line yaml.v3 puts in its
// message into the FieldError.
func notYAML(p *problems, err error) {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		fmt.Sscan(m[1], &line)
		msg = m[2]
	}
	p.add("", line, err, "not valid YAML: %s", msg)
}

// meta remembers where a decoded config came from.
type meta struct {
	source string
	lines  map[string]int  // field path → line of its value
	nulls  map[string]bool // field paths whose value is null
}

// lineOf returns the line of path, or of its closest ancestor that has one.
func (m *meta) lineOf(path string) int {
	if m == nil {
		return 0
	}
	for q := path; ; q = parentPath(q) {
		if l, ok := m.lines[q]; ok {
			return l
		}
		if q == "" {
			return 0
		}
	}
}

// setNonNull reports whether the document had a value other than null at
// path.
func (m *meta) setNonNull(path string) bool {
	if m == nil {
		return false
	}
	_, ok := m.lines[path]
	return ok && !m.nulls[path]
}

// decoder walks a YAML node tree against a Go value by reflection over the
// yaml struct tags, recording every problem in p and the line of every value
// in lines.
type decoder struct {
	p      *problems
	lines  map[string]int
	nulls  map[string]bool
	budget int
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	quantityType = reflect.TypeFor[resource.Quantity]()
)

// resolve follows aliases and charges the node budget. It returns nil once
// the budget is spent.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if d.budget <= 0 {
		return nil
	}
	d.budget--
	if d.budget == 0 {
		d.p.add("", 0, nil, "document too large: more than %d values once aliases are expanded", maxNodes)
		return nil
	}
	return n
}

func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	line := n.Line
	if n = d.resolve(n); n == nil {
		return
	}
	d.lines[path] = line
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		d.nulls[path] = true
		return // left out; defaults or the required check take over
	}
	switch v.Type() {
	case durationType:
		d.duration(n, v, path, line)
		return
	case rawType:
		d.freeform(n, v, path, line)
		return
	case quantityType:
		d.quantity(n, v, path, line)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.mapping(n, v, path, line)
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		d.value(n, e.Elem(), path)
		v.Set(e)
	case reflect.Slice:
		d.sequence(n, v, path, line)
	case reflect.Map:
		d.stringMap(n, v, path, line)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			d.typeError(path, line, n, "a string")
			return
		}
		v.SetString(n.Value)
	case reflect.Int:
		var i int
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&i) != nil {
			d.typeError(path, line, n, "an integer")
			return
		}
		v.SetInt(int64(i))
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.typeError(path, line, n, "a boolean")
			return
		}
		v.SetBool(b)
	default:
		d.p.add(path, line, nil, "cannot decode into %s", v.Type())
	}
}

func (d *decoder) typeError(path string, line int, n *yaml.Node, want string) {
	d.p.add(path, line, nil, "want %s, got %s", want, describe(n))
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string, line int) {
	const want = `a duration such as "10s" or "1m30s"`
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.typeError(path, line, n, want)
		return
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		d.p.add(path, line, err, "want %s, got %s", want, describe(n))
		return
	}
	v.SetInt(int64(dur))
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string, line int) {
	if n.Kind != yaml.SequenceNode {
		d.typeError(path, line, n, "a list")
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.value(item, s.Index(i), indexPath(path, i))
	}
	v.Set(s)
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string, line int) {
	names, index := fieldsOf(v.Type())
	d.entries(n, path, line, "field", func(name, fpath string, k, val *yaml.Node) {
		fi, known := index[name]
		if !known {
			d.unknownField(fpath, k.Line, name, names, path)
			return
		}
		d.value(val, v.Field(fi), fpath)
	})
}

// entries calls each for every key of a mapping node once: a node that is
// no mapping, a key that cannot be one and a key set twice (what names it)
// are reported instead.
func (d *decoder) entries(n *yaml.Node, path string, line int, what string, each func(name, kpath string, k, val *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.typeError(path, line, n, "a mapping")
		return
	}
	seen := make(map[string]int)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name, ok := d.key(k, path)
		if !ok {
			continue
		}
		kpath := keyPath(path, name)
		if first, dup := seen[name]; dup {
			d.p.add(kpath, k.Line, nil, "%s set twice; first set on line %d", what, first)
			continue
		}
		seen[name] = k.Line
		each(name, kpath, k, val)
	}
}

// stringMap decodes a mapping of free keys (labels) into a map of
// strings; a key set twice is an error, like a field set twice.
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string, line int) {
	if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.String {
		d.p.add(path, line, nil, "cannot decode into %s", v.Type())
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	d.entries(n, path, line, "key", func(name, kpath string, _, val *yaml.Node) {
		e := reflect.New(v.Type().Elem()).Elem()
		d.value(val, e, kpath)
		m.SetMapIndex(reflect.ValueOf(name).Convert(v.Type().Key()), e)
	})
	if n.Kind == yaml.MappingNode {
		v.Set(m)
	}
}

// key returns a mapping key's name, or false after reporting a key that
// cannot be one.
func (d *decoder) key(k *yaml.Node, path string) (string, bool) {
	line := k.Line
	if k = d.resolve(k); k == nil {
		return "", false
	}
	switch {
	case k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge":
		d.p.add(keyPath(path, k.Value), line, nil, "merge keys (<<) are not supported")
		return "", false
	case k.Kind != yaml.ScalarNode:
		d.p.add(path, line, nil, "want field names as keys, got %s", describe(k))
		return "", false
	}
	return k.Value, true
}

func (d *decoder) unknownField(fpath string, line int, name string, known []string, parent string) {
	if s := suggest(name, known); s != "" {
		d.p.add(fpath, line, nil, "unknown field (did you mean %q?)", s)
		// The misspelt field is not also missing.
		d.p.suppress(keyPath(parent, s))
		return
	}
	d.p.add(fpath, line, nil, "unknown field (want one of: %s)", strings.Join(known, ", "))
}

// fieldsOf lists the yaml names of t's fields, in order, and maps each name
// to its field index.
func fieldsOf(t reflect.Type) ([]string, map[string]int) {
	var names []string
	index := make(map[string]int)
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		names = append(names, name)
		index[name] = i
	}
	return names, index
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// keyPath appends a mapping key to a path, quoting keys that are not plain
// identifiers: config.drivers, config["a.b"].
func keyPath(path, key string) string {
	if identifier.MatchString(key) {
		return joinPath(path, key)
	}
	return fmt.Sprintf("%s[%q]", path, key)
}

// describe names a node's type and value for an error message:
// `string "yes"`, `integer 3`, `a list`.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
	default:
		return "an empty value"
	}
	v := truncate(n.Value)
	tag := n.ShortTag()
	if tag == "!!str" {
		return fmt.Sprintf("string %q", v)
	}
	if !plain(v) {
		v = strconv.Quote(v) // an explicit tag on arbitrary text
	}
	if !plain(tag) {
		tag = strconv.Quote(tag)
	}
	switch tag {
	case "!!int":
		return "integer " + v
	case "!!float":
		return "number " + v
	case "!!bool":
		return "boolean " + v
	case "!!null":
		return "null"
	case "!!timestamp":
		return "timestamp " + v
	default:
		return fmt.Sprintf("%s %q", tag, v)
	}
}

// plain reports whether s prints on one line without quoting.
func plain(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) })
}
