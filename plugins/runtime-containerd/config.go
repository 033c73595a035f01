package main

import (
	"slices"
	"time"

	"github.com/podhost/podhost/sdk"
)

// config is runtime-containerd's config, as the operator writes it under
// the plugin's `config:` key.
type config struct {
	// Endpoint is containerd's socket, e.g. "unix:///run/containerd/containerd.sock".
	Endpoint string   `json:"endpoint"`
	Timeouts timeouts `json:"timeouts"`
	// ImagePullPolicy is used when the host asks for none: IfNotPresent
	// (default), Always or Never.
	ImagePullPolicy string `json:"imagePullPolicy"`
	// WatchInterval is how often the Events stream lists containerd's
	// sandboxes and containers to find changes (containerd 1.6 has no CRI
	// event API). It runs only while a stream is open.
	WatchInterval sdk.Duration `json:"watchInterval"`

	// socketPath is Endpoint's path, set by parseConfig.
	socketPath string
}

// timeouts bound calls to containerd.
type timeouts struct {
	// Runtime bounds sandbox and container calls.
	Runtime sdk.Duration `json:"runtime"`
	// Image bounds pulls and other image calls.
	Image sdk.Duration `json:"image"`
}

var pullPolicies = []string{"IfNotPresent", "Always", "Never"}

// defaultWatchInterval reports a change made outside the plugin within half
// a second, twice as fast as the host's relist, for about 1% of one core
// at 100 containers, plugin and containerd together (each poll costs about
// 1.3 ms of CPU in each; see BenchmarkWatchCost in watch_bench_test.go).
// The plugin's own calls are reported at once whatever the interval.
// minWatchInterval stops a config from turning the watch into a busy loop.
const (
	defaultWatchInterval = 500 * time.Millisecond
	minWatchInterval     = 10 * time.Millisecond
)

// defaultConfig is the config before the operator's is applied.
func defaultConfig() config {
	return config{
		Timeouts:        timeouts{Runtime: sdk.Duration(2 * time.Minute), Image: sdk.Duration(10 * time.Minute)},
		ImagePullPolicy: "IfNotPresent",
		WatchInterval:   sdk.Duration(defaultWatchInterval),
	}
}

// parseConfig decodes and validates a config, returning every problem with
// its field path.
func parseConfig(raw []byte) (config, []sdk.FieldError) {
	c := defaultConfig()
	if errs := sdk.DecodeConfig(raw, &c); len(errs) > 0 {
		return config{}, errs
	}
	var errs sdk.FieldErrors
	if path, err := sdk.UnixSocketPath(c.Endpoint); err != nil {
		errs.Addf("endpoint", "%v", err)
	} else {
		c.socketPath = path
	}
	for _, d := range []struct {
		field string
		value sdk.Duration
	}{
		{"timeouts.runtime", c.Timeouts.Runtime},
		{"timeouts.image", c.Timeouts.Image},
	} {
		if d.value <= 0 {
			errs.Addf(d.field, "must be positive, got %v", d.value)
		}
	}
	if time.Duration(c.WatchInterval) < minWatchInterval {
		errs.Addf("watchInterval", "must be at least %v, got %v", minWatchInterval, time.Duration(c.WatchInterval))
	}
	if !slices.Contains(pullPolicies, c.ImagePullPolicy) {
		errs.Addf("imagePullPolicy", "must be one of %v, got %q", pullPolicies, c.ImagePullPolicy)
	}
	if len(errs) > 0 {
		return config{}, errs
	}
	return c, nil
}
