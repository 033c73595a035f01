package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/podhost/podhost/sdk"
)

// defaultTimeout bounds each CSI call when a driver sets no timeout: the
// kubelet's two minutes.
const defaultTimeout = 2 * time.Minute

// defaultStateDir is where the plugin keeps what it published, for
// Reconstruct after a host restart.
const defaultStateDir = "/var/lib/podhost/volume-csi"

// config is volume-csi's config, as the operator writes it under the
// plugin's `config:` key.
type config struct {
	// Drivers are the CSI node plugins a volume may name besides those
	// that register at run time (RegisterDriver); it may be empty.
	Drivers []driver `json:"drivers"`
	// StateDir holds the plugin's records of published volumes; empty means
	// /var/lib/podhost/volume-csi.
	StateDir string `json:"stateDir"`
}

// driver is one CSI node plugin.
type driver struct {
	// Name is the CSI driver name volumes use, e.g. "ebs.csi.aws.com".
	Name string `json:"name"`
	// Endpoint is the driver's socket, e.g. "unix:///var/lib/csi/ebs.sock".
	Endpoint string `json:"endpoint"`
	// Timeout bounds every call to the driver; zero means two minutes.
	Timeout sdk.Duration `json:"timeout"`
}

// timeout is the deadline of each call to d.
func (d driver) timeout() time.Duration {
	if d.Timeout == 0 {
		return defaultTimeout
	}
	return time.Duration(d.Timeout)
}

// stateDir is the directory of the plugin's records.
func (c config) stateDir() string {
	if c.StateDir == "" {
		return defaultStateDir
	}
	return c.StateDir
}

// parseConfig decodes and validates a config, returning every problem with
// its field path.
func parseConfig(raw []byte) (config, []sdk.FieldError) {
	var c config
	if errs := sdk.DecodeConfig(raw, &c); len(errs) > 0 {
		return config{}, errs
	}
	var errs sdk.FieldErrors
	seen := map[string]int{}
	for i, d := range c.Drivers {
		field := fmt.Sprintf("drivers[%d]", i)
		switch j, dup := seen[d.Name]; {
		case d.Name == "":
			errs.Addf(field+".name", "is required")
		case dup:
			errs.Addf(field+".name", "%q is already the name of drivers[%d]", d.Name, j)
		default:
			seen[d.Name] = i
		}
		if _, err := sdk.UnixSocketPath(d.Endpoint); err != nil {
			errs.Addf(field+".endpoint", "%v", err)
		}
		if d.Timeout < 0 {
			errs.Addf(field+".timeout", "must not be negative, got %v", d.Timeout)
		}
	}
	if c.StateDir != "" && !filepath.IsAbs(c.StateDir) {
		errs.Addf("stateDir", "must be an absolute path, got %q", c.StateDir)
	}
	if len(errs) > 0 {
		return config{}, errs
	}
	return c, nil
}
