package sdk

import (
	"testing"

	"github.com/hashicorp/go-plugin"
)

// A plugin's Close runs once serving ended, and not before.
func TestServeClosesThePluginAfterServing(t *testing.T) {
	var steps []string
	p := Plugin{Close: func() { steps = append(steps, "close") }}
	serve(p, &plugin.ServeConfig{}, func(*plugin.ServeConfig) { steps = append(steps, "serve") })
	if len(steps) != 2 || steps[0] != "serve" || steps[1] != "close" {
		t.Fatalf("steps %q; want serve, then close", steps)
	}
	serve(Plugin{}, &plugin.ServeConfig{}, func(*plugin.ServeConfig) {}) // no Close: nothing to call
}
