package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/podhost/podhost/sdk"
)

// exampleConfig is the plugin's config.
type exampleConfig struct {
	Root string `json:"root"`
}

// Validate makes exampleConfig a sdk.ConfigValidator.
func (c exampleConfig) Validate(errs *sdk.FieldErrors) {
	if !filepath.IsAbs(c.Root) {
		errs.Addf("root", "want an absolute path, got %q", c.Root)
	}
}

// volumes is a volume plugin's logic; examples/volume-scratch is a complete
// one. It implements sdk.Volumes; a Metrics method would make it a
// sdk.VolumeMetrics and add the capability volume.metrics.
type volumes struct {
	config *sdk.Config[exampleConfig]
}

func (v *volumes) Stage(ctx context.Context, r sdk.StageRequest) error {
	// r.VolumeID is one path element: the SDK refused any other.
	dir := filepath.Join(v.config.Get().Root, r.VolumeID)
	err := os.MkdirAll(dir, 0o750) // … and mount dir on r.StagingPath
	return errors.Join(err, sdk.Midway(ctx))
}

func (v *volumes) Unstage(context.Context, sdk.UnstageRequest) error { return nil }

func (v *volumes) Publish(ctx context.Context, r sdk.PublishRequest) error {
	return fmt.Errorf("volume %s at %s: %w", r.VolumeID, r.StagingPath, sdk.ErrNotStaged)
}

func (v *volumes) Unpublish(context.Context, sdk.UnpublishRequest) error { return nil }

// A plugin's main is one Serve call. Serve answers the go-plugin handshake,
// serves Identity (GetInfo, Configure, Probe) and the kind's service, and
// logs JSON to stderr, which the host forwards. With Volumes, the SDK
// checks each request, maps the errors and derives the capabilities.
func ExampleServe() {
	v := &volumes{config: sdk.NewConfig(exampleConfig{Root: "/var/lib/example"})}
	sdk.Serve(sdk.Plugin{
		Name:      "volume-example",
		Version:   "1.0.0",
		Kind:      sdk.KindVolume,
		Volumes:   v,
		Configure: v.config.Configure,
		Probe:     func(context.Context) (bool, string) { return true, "ready" },
	})
}

// Stage and Publish call Midway once they changed the node, and return its
// error with theirs: the context's error, which the SDK answers CANCELLED
// or DEADLINE_EXCEEDED (uncertain). Under sdk/volumetest it is also where
// the kit interrupts the call.
func ExampleMidway() {
	ctx, cancel := context.WithCancel(context.Background())
	stage := func(ctx context.Context) error {
		var err error // mount the volume on the staging path
		return errors.Join(err, sdk.Midway(ctx))
	}
	fmt.Println(stage(ctx))
	cancel() // the host gave up waiting
	fmt.Println(stage(ctx))
	// Output:
	// <nil>
	// context canceled
}

// Config keeps the config in effect; Configure refuses a config with every
// problem found, and leaves the previous one in effect.
func ExampleConfig() {
	c := sdk.NewConfig(exampleConfig{Root: "/var/lib/example"})
	fmt.Println(c.Configure(context.Background(), []byte(`{"root":"relative"}`)))
	fmt.Println(c.Get().Root)
	fmt.Println(c.Configure(context.Background(), []byte(`{"root":"/srv/example"}`)))
	fmt.Println(c.Get().Root)
	// Output:
	// [root: want an absolute path, got "relative"]
	// /var/lib/example
	// []
	// /srv/example
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
