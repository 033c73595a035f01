package config

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// freeform converts a plugin's config subtree, which must be a mapping, to
// JSON, keeping the order of its keys.
func (d *decoder) freeform(n *yaml.Node, v reflect.Value, path string, line int) {
	if n.Kind != yaml.MappingNode {
		d.typeError(path, line, n, "a mapping")
		return
	}
	var b bytes.Buffer
	if d.toJSON(&b, n, path, line) {
		v.SetBytes(b.Bytes())
	}
}

// toJSON writes n as JSON to b. It reports false after recording why it
// cannot.
func (d *decoder) toJSON(b *bytes.Buffer, n *yaml.Node, path string, line int) bool {
	switch n.Kind {
	case yaml.MappingNode:
		return d.objectToJSON(b, n, path)
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			ipath, iline := indexPath(path, i), item.Line
			if item = d.resolve(item); item == nil || !d.toJSON(b, item, ipath, iline) {
				return false
			}
		}
		b.WriteByte(']')
		return true
	case yaml.ScalarNode:
		return d.scalarToJSON(b, n, path, line)
	default:
		d.p.add(path, line, nil, "want a JSON value, got %s", describe(n))
		return false
	}
}

func (d *decoder) objectToJSON(b *bytes.Buffer, n *yaml.Node, path string) bool {
	b.WriteByte('{')
	seen := make(map[string]int)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name, ok := d.key(k, path)
		if !ok {
			return false
		}
		kpath := keyPath(path, name)
		if first, dup := seen[name]; dup {
			d.p.add(kpath, k.Line, nil, "key set twice; first set on line %d", first)
			return false
		}
		seen[name] = k.Line
		if i > 0 {
			b.WriteByte(',')
		}
		_ = writeJSON(b, name)
		b.WriteByte(':')
		vline := val.Line
		if val = d.resolve(val); val == nil || !d.toJSON(b, val, kpath, vline) {
			return false
		}
	}
	b.WriteByte('}')
	return true
}

func (d *decoder) scalarToJSON(b *bytes.Buffer, n *yaml.Node, path string, line int) bool {
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err != nil {
			d.p.add(path, line, err, "want a boolean, got %s", describe(n))
			return false
		}
		_ = writeJSON(b, v)
	case "!!int":
		var v any
		if err := n.Decode(&v); err != nil {
			d.p.add(path, line, err, "want an integer, got %s", describe(n))
			return false
		}
		if err := writeJSON(b, v); err != nil {
			d.p.add(path, line, err, "cannot pass %s as JSON", describe(n))
			return false
		}
	case "!!float":
		var v float64
		if err := n.Decode(&v); err != nil {
			d.p.add(path, line, err, "want a number, got %s", describe(n))
			return false
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			d.p.add(path, line, nil, "JSON has no %s; quote it to pass a string", n.Value)
			return false
		}
		_ = writeJSON(b, v)
	default: // strings, timestamps, binary and custom tags pass as text
		_ = writeJSON(b, n.Value)
	}
	return true
}

// writeJSON writes a string, bool or finite number as JSON.
func writeJSON(b *bytes.Buffer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(data)
	return nil
}
