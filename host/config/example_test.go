package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/podhost/podhost/host/config"
)

const examplePath = "../../examples/host.yaml"

// TestExampleConfig parses the shipped example without touching the
// filesystem, then validates it against a plugin directory of real files.
func TestExampleConfig(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(data, "examples/host.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specs := c.PluginSpecs()
	if len(specs) != 2 || specs[0].Kind != "runtime" || specs[1].Kind != "volume" {
		t.Fatalf("specs = %+v, want a runtime and a volume plugin", specs)
	}
	if got, want := string(specs[1].Config), `{"drivers":[{"name":"loop.csi.podhost.dev","endpoint":"unix:///run/csi/loop.sock"}]}`; got != want {
		t.Errorf("csi config = %s, want %s", got, want)
	}

	dir := t.TempDir()
	for _, name := range []string{"runtime-containerd", "volume-csi"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c.PluginDir = dir
	if err := c.Validate(os.Stat); err != nil {
		t.Errorf("Validate with the plugins in %s: %v", dir, err)
	}
	if specs := c.PluginSpecs(); specs[0].Path != filepath.Join(dir, "runtime-containerd") {
		t.Errorf("runtime path = %q after overriding PluginDir", specs[0].Path)
	}
}

func ExampleParse() {
	_, err := config.Parse([]byte(`apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: /var/lib/podhost
pluginDir: /usr/libexec/podhost/plugins
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
`), "host.yaml")
	fmt.Println(err)
	// Output:
	// host.yaml: line 8: plugins[0].pth: unknown field (did you mean "path"?)
	// host.yaml: line 12: plugins[1].required: want a boolean, got string "yes"
	// host.yaml: line 14: supervision.startTimeout: want a duration such as "10s" or "1m30s", got integer 10
}
