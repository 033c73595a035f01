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

// defaultConfig is the config before the operator's is applied.
func defaultConfig() config {
	return config{
		Timeouts:        timeouts{Runtime: sdk.Duration(2 * time.Minute), Image: sdk.Duration(10 * time.Minute)},
		ImagePullPolicy: "IfNotPresent",
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
	if !slices.Contains(pullPolicies, c.ImagePullPolicy) {
		errs.Addf("imagePullPolicy", "must be one of %v, got %q", pullPolicies, c.ImagePullPolicy)
	}
	if len(errs) > 0 {
		return config{}, errs
	}
	return c, nil
}
