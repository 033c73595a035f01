package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
)

// volumes is a volume plugin's gRPC face; a real one implements the
// contract's calls (see examples/volume-scratch).
type volumes struct {
	volumev1.UnimplementedVolumeServer
}

// exampleConfig is the plugin's config.
type exampleConfig struct {
	Root string `json:"root"`
}

// A plugin's main is one Serve call. Serve answers the go-plugin handshake,
// serves Identity (GetInfo, Configure, Probe) and the kind's service, and
// logs JSON to stderr, which the host forwards.
func ExampleServe() {
	sdk.Serve(sdk.Plugin{
		Name:         "volume-example",
		Version:      "1.0.0",
		Kind:         sdk.KindVolume,
		Capabilities: []string{sdk.CapVolumeMetrics},
		Volume:       &volumes{},
		Configure: func(_ context.Context, raw json.RawMessage) []sdk.FieldError {
			c := exampleConfig{Root: "/var/lib/example"}
			return sdk.DecodeConfig(raw, &c)
		},
		Probe: func(context.Context) (bool, string) { return true, "ready" },
	})
}

// DecodeConfig reports every problem with its field path; FieldErrors adds
// the plugin's own checks once the shape is right.
func ExampleDecodeConfig() {
	type driver struct {
		Name     string `json:"name"`
		Endpoint string `json:"endpoint"`
	}
	type config struct {
		Drivers []driver     `json:"drivers"`
		Timeout sdk.Duration `json:"timeout"`
	}
	raw := []byte(`{"drivers":[{"name":"a"},{"name":"b","endpoit":"unix:///b.sock"}],"timeout":30}`)
	var c config
	for _, e := range sdk.DecodeConfig(raw, &c) {
		fmt.Println(e)
	}

	c = config{}
	_ = sdk.DecodeConfig([]byte(`{"drivers":[{"name":"a","endpoint":"/a.sock"}]}`), &c)
	var errs sdk.FieldErrors
	for i, d := range c.Drivers {
		if _, err := sdk.UnixSocketPath(d.Endpoint); err != nil {
			errs.Addf(fmt.Sprintf("drivers[%d].endpoint", i), "%v", err)
		}
	}
	for _, e := range errs {
		fmt.Println(e)
	}
	// Output:
	// drivers[1].endpoit: unknown field
	// timeout: want a duration string such as "30s", got number
	// drivers[0].endpoint: must be a unix:// address, such as "unix:///run/plugin.sock"
}
