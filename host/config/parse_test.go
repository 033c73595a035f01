package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/pluginapi"
)

// head is the valid start of a document; the plugins follow from line 6.
const head = `apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: /var/lib/podhost
pluginDir: /usr/libexec/podhost/plugins
plugins:
`

// runtime is a valid runtime plugin entry, lines 6–8 after head.
const runtime = `  - name: containerd
    kind: runtime
    path: runtime-containerd
`

// want is one expected FieldError: its exact path and line, and a phrase of
// its message.
type want struct {
	path     string
	line     int
	contains string
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []want
	}{
		{"not YAML", "apiVersion: podhost.dev/v1alpha1\nkind: HostConfig\nrootDir: [\n", []want{
			{"", 3, "not valid YAML: did not find expected node content"},
		}},
		{"tab indentation", "apiVersion: x\n\tkind: y\n", []want{
			{"", 2, "not valid YAML: "},
		}},
		{"empty", "", []want{{"", 0, "empty document"}}},
		{"only comments", "# nothing\n", []want{{"", 0, "empty document"}}},
		{"two documents", head + runtime + "---\nkind: HostConfig\n", []want{
			{"", 9, "more than one YAML document"},
		}},
		{"root is a list", "- a\n- b\n", []want{{"", 1, "want a HostConfig mapping, got a list"}}},
		{"misspelt top-level field", head + runtime + "logLevl: debug\n", []want{
			{"logLevl", 9, `unknown field (did you mean "logLevel"?)`},
		}},
		{"misspelt plugin field", head + "  - name: containerd\n    kind: runtime\n    pth: runtime-containerd\n", []want{
			{"plugins[0].pth", 8, `unknown field (did you mean "path"?)`},
		}},
		{"misspelt nested field", head + runtime + "supervision:\n  restartBackof: {initial: 1s}\n", []want{
			{"supervision.restartBackof", 10, `did you mean "restartBackoff"?`},
		}},
		{"unknown field far from any", head + runtime + "colour: blue\n", []want{
			{"colour", 9, "unknown field (want one of: apiVersion, kind, rootDir,"},
		}},
		{"field set twice", head + runtime + "rootDir: /other\n", []want{
			{"rootDir", 9, "field set twice; first set on line 3"},
		}},
		{"merge key", head + runtime + "api:\n  <<: {socket: /x}\n", []want{
			{`api["<<"]`, 10, "merge keys (<<) are not supported"},
		}},
		{"string wanted, list given", head + runtime + "manifestDir: [a]\n", []want{
			{"manifestDir", 9, "want a string, got a list"},
		}},
		{"string wanted, integer given", head + "  - name: 42\n    kind: runtime\n    path: p\n", []want{
			{"plugins[0].name", 6, "want a string, got integer 42"},
		}},
		{"boolean wanted, string given", head + runtime + "  - name: csi\n    kind: volume\n    path: volume-csi\n    required: \"yes\"\n", []want{
			{"plugins[1].required", 12, `want a boolean, got string "yes"`},
		}},
		{"YAML 1.1 boolean", head + runtime + "  - name: csi\n    kind: volume\n    path: volume-csi\n    required: yes\n", []want{
			{"plugins[1].required", 12, `want a boolean, got string "yes"`},
		}},
		{"list wanted", head + "  name: containerd\n", []want{
			{"plugins", 6, "want a list, got a mapping"},
		}},
		{"mapping wanted", head + runtime + "supervision: fast\n", []want{
			{"supervision", 9, `want a mapping, got string "fast"`},
		}},
		{"args not strings", head + "  - name: containerd\n    kind: runtime\n    path: p\n    args: [--debug, 3]\n", []want{
			{"plugins[0].args[1]", 9, "want a string, got integer 3"},
		}},
		{"config not a mapping", head + "  - name: containerd\n    kind: runtime\n    path: p\n    config: [1]\n", []want{
			{"plugins[0].config", 9, "want a mapping, got a list"},
		}},
		{"config infinity", head + "  - name: containerd\n    kind: runtime\n    path: p\n    config:\n      limits: {max: .inf}\n", []want{
			{"plugins[0].config.limits.max", 10, "JSON has no .inf"},
		}},
		{"config key twice", head + "  - name: containerd\n    kind: runtime\n    path: p\n    config:\n      a: 1\n      a: 2\n", []want{
			{"plugins[0].config.a", 11, "key set twice; first set on line 10"},
		}},
		{"duration without unit", head + runtime + "supervision:\n  startTimeout: 10\n", []want{
			{"supervision.startTimeout", 10, `want a duration such as "10s" or "1m30s", got integer 10`},
		}},
		{"duration misspelt", head + runtime + "supervision:\n  restartBackoff:\n    max: 1 minute\n", []want{
			{"supervision.restartBackoff.max", 11, `got string "1 minute"`},
		}},
		{"duration zero", head + runtime + "supervision:\n  probeInterval: 0s\n", []want{
			{"supervision.probeInterval", 10, "want a positive duration, got 0s"},
		}},
		{"duration negative", head + runtime + "supervision:\n  startTimeout: -1s\n", []want{
			{"supervision.startTimeout", 10, "want a positive duration, got -1s"},
		}},
		{"backoff initial above max", head + runtime + "supervision:\n  restartBackoff: {initial: 5m}\n", []want{
			{"supervision.restartBackoff.initial", 10, "5m0s is more than max (1m0s)"},
		}},
		{"apiVersion missing", "kind: HostConfig\nrootDir: /r\npluginDir: /p\nplugins:\n" + runtime, []want{
			{"apiVersion", 1, `required field is missing; want "podhost.dev/v1alpha1"`},
		}},
		{"apiVersion wrong", strings.Replace(head, "podhost.dev/v1alpha1", "v1", 1) + runtime, []want{
			{"apiVersion", 1, `want "podhost.dev/v1alpha1", got "v1"`},
		}},
		{"kind wrong", strings.Replace(head, "kind: HostConfig", "kind: Pod", 1) + runtime, []want{
			{"kind", 2, `want "HostConfig", got "Pod"`},
		}},
		{"rootDir missing", strings.Replace(head, "rootDir: /var/lib/podhost\n", "", 1) + "  - name: containerd\n    kind: runtime\n    path: p\n", []want{
			{"rootDir", 1, "required field is missing"},
		}},
		{"rootDir relative", strings.Replace(head, "/var/lib/podhost", "var/lib", 1) + runtime, []want{
			{"rootDir", 3, `want an absolute path, got "var/lib"`},
		}},
		{"pluginDir relative", strings.Replace(head, "/usr/libexec/podhost/plugins", "plugins", 1) + runtime, []want{
			{"pluginDir", 4, `want an absolute path, got "plugins"`},
		}},
		{"socket relative", head + runtime + "api: {socket: host.sock}\n", []want{
			{"api.socket", 9, `want an absolute path, got "host.sock"`},
		}},
		{"log level", head + runtime + "logLevel: verbose\n", []want{
			{"logLevel", 9, `want one of trace, debug, info, warn, error; got "verbose"`},
		}},
		{"log format", head + runtime + "logFormat: logfmt\n", []want{
			{"logFormat", 9, `want one of text, json; got "logfmt"`},
		}},
		{"container log size", head + runtime + "containerLogMaxSize: 10MB\ncontainerLogMaxFiles: 1\n", []want{
			{"containerLogMaxSize", 9, `want a quantity such as "10Mi" or "500Ki", got string "10MB"`},
			{"containerLogMaxFiles", 10, "want at least 2"},
		}},
		{"plugin fields missing", head + runtime + "  - required: false\n", []want{
			{"plugins[1].name", 9, "required field is missing"},
			{"plugins[1].kind", 9, "required field is missing"},
			{"plugins[1].path", 9, "required field is missing"},
		}},
		{"duplicate names", head + runtime + "  - name: containerd\n    kind: volume\n    path: v\n", []want{
			{"plugins[1].name", 9, `duplicate plugin name "containerd"; plugins[0] has it already`},
		}},
		{"name not a DNS label", head + "  - name: Container_D\n    kind: runtime\n    path: p\n", []want{
			{"plugins[0].name", 6, `invalid name "Container_D"`},
		}},
		{"name too long", head + "  - name: " + strings.Repeat("a", 64) + "\n    kind: runtime\n    path: p\n", []want{
			{"plugins[0].name", 6, "at most 63"},
		}},
		{"unknown kind", head + runtime + "  - name: x\n    kind: storage\n    path: x\n", []want{
			{"plugins[1].kind", 10, `unknown kind "storage"; want one of "runtime", "volume"`},
		}},
		{"misspelt kind", head + "  - name: containerd\n    kind: runtim\n    path: p\n", []want{
			{"plugins[0].kind", 7, `unknown kind "runtim" (did you mean "runtime"?)`},
		}},
		{"no runtime", head + "  - name: csi\n    kind: volume\n    path: v\n", []want{
			{"plugins", 6, "want exactly one runtime plugin, got none"},
		}},
		{"no plugins", strings.TrimSuffix(head, "plugins:\n"), []want{
			{"plugins", 1, "want exactly one runtime plugin, got none"},
		}},
		{"two runtimes", head + runtime + "  - name: crio\n    kind: runtime\n    path: c\n", []want{
			{"plugins[1].kind", 10, "second runtime plugin (plugins[0] is one); want exactly one"},
		}},
		{"optional runtime", head + runtime + "    required: false\n", []want{
			{"plugins[0].required", 9, "a runtime plugin cannot be optional"},
		}},
		{"sha256 short", head + runtime + "    sha256: abc\n", []want{
			{"plugins[0].sha256", 9, `want 64 hex digits, got 3 characters "abc"`},
		}},
		{"sha256 not hex", head + runtime + "    sha256: " + strings.Repeat("g", 64) + "\n", []want{
			{"plugins[0].sha256", 9, "want 64 hex digits, got 64 characters"},
		}},
		{"relative path without pluginDir", strings.Replace(head, "pluginDir: /usr/libexec/podhost/plugins\n", "", 1) + runtime, []want{
			{"plugins[0].path", 7, `relative path "runtime-containerd" needs pluginDir`},
		}},
		{"alias bomb", aliasBomb(), []want{{"", 0, "document too large"}}},
		{"every class at once", `apiVersion: v1
kind: HostConfig
rootDir: relative
logLevl: info
plugins:
  - name: containerd
    kind: runtime
    pth: runtime-containerd
  - name: csi
    kind: volume
    path: volume-csi
    required: "yes"
supervision:
  startTimeout: 10
`, []want{
			{"apiVersion", 1, `want "podhost.dev/v1alpha1", got "v1"`},
			{"rootDir", 3, "want an absolute path"},
			{"logLevl", 4, `did you mean "logLevel"?`},
			{"plugins[0].pth", 8, `did you mean "path"?`},
			{"plugins[1].path", 11, `relative path "volume-csi" needs pluginDir`},
			{"plugins[1].required", 12, `want a boolean, got string "yes"`},
			{"supervision.startTimeout", 14, "want a duration"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.doc), "host.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded with %+v; want errors %v", c, tc.want)
			}
			if c != nil {
				t.Errorf("Parse returned a config with its error")
			}
			assertErrors(t, err, tc.want)
		})
	}
}

// assertErrors checks that err is a *ValidationError holding exactly the
// wanted field errors, in order.
func assertErrors(t *testing.T, err error, wants []want) {
	t.Helper()
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	if len(verr.Errors) != len(wants) {
		t.Errorf("got %d errors, want %d:\n%v", len(verr.Errors), len(wants), err)
	}
	for i, w := range wants {
		if i >= len(verr.Errors) {
			t.Errorf("missing error %d: %+v", i, w)
			continue
		}
		got := verr.Errors[i]
		if got.Path != w.path || got.Line != w.line || !strings.Contains(got.Message, w.contains) {
			t.Errorf("error %d = {path %q, line %d, %q}; want {path %q, line %d, containing %q}",
				i, got.Path, got.Line, got.Message, w.path, w.line, w.contains)
		}
		if w.path != "" && !strings.Contains(err.Error(), w.path+": ") {
			t.Errorf("Error() does not name %q:\n%v", w.path, err)
		}
	}
}

func aliasBomb() string {
	var b strings.Builder
	b.WriteString(head + "  - name: containerd\n    kind: runtime\n    path: p\n    config:\n")
	b.WriteString("      a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("      a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestValidationErrorFormat(t *testing.T) {
	_, err := Parse([]byte(head+"  - name: containerd\n    kind: runtime\n    pth: runtime-containerd\n    required: \"yes\"\n"), "host.yaml")
	const wantText = `host.yaml: line 8: plugins[0].pth: unknown field (did you mean "path"?)
host.yaml: line 9: plugins[0].required: want a boolean, got string "yes"`
	if err == nil || err.Error() != wantText {
		t.Errorf("Error() =\n%v\nwant\n%s", err, wantText)
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse([]byte(head+runtime), "host.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.LogLevel != "info" {
		t.Errorf("LogLevel = %q, want info", c.LogLevel)
	}
	if want := (Supervision{10 * time.Second, 10 * time.Second, Backoff{time.Second, time.Minute, 10 * time.Minute}}); c.Supervision != want {
		t.Errorf("Supervision = %+v, want %+v", c.Supervision, want)
	}
	if c.API.Socket != "/var/lib/podhost/host.sock" {
		t.Errorf("API.Socket = %q, want /var/lib/podhost/host.sock", c.API.Socket)
	}
	if r := c.Plugins[0].Required; r == nil || !*r {
		t.Errorf("Required = %v, want true", r)
	}
	if c.LogFormat != "text" || c.ContainerLogMaxBytes() != 10<<20 || c.ContainerLogMaxFiles != 5 || c.ContainerLogMonitorInterval != 10*time.Second {
		t.Errorf("logs = %q, %d bytes, %d files, every %s; want text, 10Mi, 5, 10s",
			c.LogFormat, c.ContainerLogMaxBytes(), c.ContainerLogMaxFiles, c.ContainerLogMonitorInterval)
	}
}

func TestParseNullMeansDefault(t *testing.T) {
	c, err := Parse([]byte(head+runtime+"    required: ~\nsupervision:\n  startTimeout:\n  restartBackoff: ~\napi: {socket: null}\nmanifestDir:\n"), "host.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Supervision.StartTimeout != DefaultStartTimeout || c.Supervision.RestartBackoff.Max != DefaultBackoffMax {
		t.Errorf("Supervision = %+v, want the defaults", c.Supervision)
	}
	if c.API.Socket != "/var/lib/podhost/host.sock" || c.ManifestDir != "" || !*c.Plugins[0].Required {
		t.Errorf("config = %+v, want defaults for the null fields", c)
	}
}

func TestPluginSpecs(t *testing.T) {
	doc := head + runtime + `    sha256: "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
    args: [--debug]
    config: {endpoint: "unix:///run/containerd/containerd.sock", timeouts: [1, 2.5, true, null], "a.b": {z: 1, a: 2}}
  - name: csi
    kind: volume
    path: /opt/volume-csi
    required: false
supervision:
  restartBackoff: {initial: 2s, max: 30s, resetAfter: 1h}
api:
  socket: /run/podhost.sock
`
	c, err := Parse([]byte(doc), "host.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specs := c.PluginSpecs()
	want := []Plugin{{
		Name:     "containerd",
		Kind:     pluginapi.KindRuntime,
		Path:     "/usr/libexec/podhost/plugins/runtime-containerd",
		Args:     []string{"--debug"},
		SHA256:   "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
		Config:   json.RawMessage(`{"endpoint":"unix:///run/containerd/containerd.sock","timeouts":[1,2.5,true,null],"a.b":{"z":1,"a":2}}`),
		Required: true,
	}, {
		Name: "csi",
		Kind: pluginapi.KindVolume,
		Path: "/opt/volume-csi",
	}}
	if len(specs) != len(want) {
		t.Fatalf("got %d specs, want %d", len(specs), len(want))
	}
	for i := range want {
		g, w := specs[i], want[i]
		if g.Name != w.Name || g.Kind != w.Kind || g.Path != w.Path || g.SHA256 != w.SHA256 ||
			g.Required != w.Required || string(g.Config) != string(w.Config) ||
			strings.Join(g.Args, " ") != strings.Join(w.Args, " ") {
			t.Errorf("spec %d =\n%+v (config %s)\nwant\n%+v (config %s)", i, g, g.Config, w, w.Config)
		}
	}
	if specs[1].Config != nil {
		t.Errorf("csi Config = %s, want nil", specs[1].Config)
	}
	if c.Supervision.RestartBackoff != (Backoff{2 * time.Second, 30 * time.Second, time.Hour}) || c.API.Socket != "/run/podhost.sock" {
		t.Errorf("config = %+v", c)
	}

	// Overriding PluginDir moves relative paths only; specs share no memory.
	c.PluginDir = "/build/plugins"
	specs2 := c.PluginSpecs()
	if specs2[0].Path != "/build/plugins/runtime-containerd" || specs2[1].Path != "/opt/volume-csi" {
		t.Errorf("paths after override = %q, %q", specs2[0].Path, specs2[1].Path)
	}
	specs2[0].Config[0] = 'X'
	specs2[0].Args[0] = "changed"
	if c.Plugins[0].Config[0] != '{' || c.Plugins[0].Args[0] != "--debug" {
		t.Errorf("PluginSpecs shares memory with the config")
	}
}

func TestParseAliases(t *testing.T) {
	doc := head + runtime + `    config: &shared {endpoint: "unix:///x"}
  - name: csi
    kind: volume
    path: volume-csi
    config: *shared
`
	c, err := Parse([]byte(doc), "host.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c.PluginSpecs()[1].Config); got != `{"endpoint":"unix:///x"}` {
		t.Errorf("aliased config = %s", got)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"name", "kind", "path", "sha256", "required", "args", "config"}
	for unknown, want := range map[string]string{
		"pth": "path", "Path": "path", "sha265": "sha256", "requried": "required",
		"conf": "config", "cfg": "", "nmae": "", "names": "name", "endpoint": "",
	} {
		if got := suggest(unknown, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", unknown, got, want)
		}
	}
}
