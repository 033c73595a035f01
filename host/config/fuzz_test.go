package config

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// documentLevel are the messages of errors about the document as a whole or
// the keys of its top-level mapping, the only ones without a field path.
var documentLevel = []string{"not valid YAML: ", "empty document", "more than one YAML document", "want a HostConfig mapping", "document too large", "want field names as keys"}

func FuzzParse(f *testing.F) {
	if example, err := os.ReadFile("../../examples/host.yaml"); err == nil {
		f.Add(string(example))
	}
	for _, seed := range []string{
		head + runtime,
		head + runtime + "    config: {a: [1, 2.5, true, ~, {b: c}], \"x.y\": &z [q], w: *z}\n",
		head + "  - name: csi\n    kind: volume\n    pth: v\n    required: \"yes\"\n",
		head + runtime + "supervision:\n  restartBackoff: {initial: 5m, max: 1s}\n  startTimeout: 10\n",
		"apiVersion: [\n",
		"- a\n",
		"a: &a\n  b: *a\n",
		"x: !!binary aGVsbG8=\n<<: {a: 1}\n",
		"rootDir: !!int \"a\\nb\"\nkind: !!bool maybe\n",
		head + runtime + "logFormat: json\ncontainerLogMaxSize: 1.5Ki\ncontainerLogMaxFiles: 2\ncontainerLogMonitorInterval: 1s\n",
		head + runtime + "containerLogMaxSize: -0x1p3\ncontainerLogMaxFiles: 0x10\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := Parse([]byte(doc), "fuzz.yaml")
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a config and an error")
			}
			var verr *ValidationError
			if !errors.As(err, &verr) || len(verr.Errors) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty *ValidationError", err, err)
			}
			for _, fe := range verr.Errors {
				if fe.Message == "" || fe.Line < 0 || strings.Contains(fe.Error(), "\n") {
					t.Fatalf("bad field error %+v", fe)
				}
				if fe.Path == "" && !hasAnyPrefix(fe.Message, documentLevel) {
					t.Fatalf("field error without a path: %+v", fe)
				}
			}
			return
		}
		if c.Validate(func(string) (os.FileInfo, error) { return nil, os.ErrNotExist }) == nil && len(c.Plugins) > 0 {
			t.Fatalf("Validate found every plugin binary in an empty filesystem")
		}
		for _, p := range c.PluginSpecs() {
			if p.Config != nil && !json.Valid(p.Config) {
				t.Fatalf("plugin %q config is not JSON: %s", p.Name, p.Config)
			}
			if !strings.HasPrefix(p.Path, "/") {
				t.Fatalf("plugin %q path %q is not absolute", p.Name, p.Path)
			}
		}
	})
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
