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
	// Address is containerd's main socket, whose event service the Events
	// stream follows, e.g. "unix:///run/containerd/containerd.sock". Empty:
	// Endpoint, where containerd serves CRI beside its own services.
	Address string `json:"address"`
	// Namespace is the containerd namespace CRI keeps its objects in.
	Namespace string `json:"namespace"`

	// socketPath and addressPath are Endpoint's and Address's paths, set
	// by parseConfig.
	socketPath, addressPath string
}

// timeouts bound calls to containerd.
type timeouts struct {
	// Runtime bounds sandbox and container calls.
	Runtime sdk.Duration `json:"runtime"`
	// Image bounds pulls and other image calls.
	Image sdk.Duration `json:"image"`
}

var pullPolicies = []string{"IfNotPresent", "Always", "Never"}

// defaultNamespace is the namespace of containerd's CRI plugin.
const defaultNamespace = "k8s.io"

// defaultConfig is the config before the operator's is applied.
func defaultConfig() config {
	return config{
		Timeouts:        timeouts{Runtime: sdk.Duration(2 * time.Minute), Image: sdk.Duration(10 * time.Minute)},
		ImagePullPolicy: "IfNotPresent",
		Namespace:       defaultNamespace,
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
	c.addressPath = c.socketPath
	if c.Address != "" {
		if path, err := sdk.UnixSocketPath(c.Address); err != nil {
			errs.Addf("address", "%v", err)
		} else {
			c.addressPath = path
		}
	}
	if c.Namespace == "" {
		errs.Addf("namespace", "must not be empty")
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
