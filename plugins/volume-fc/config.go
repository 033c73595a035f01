package main

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/podhost/podhost/sdk"
)

// config is volume-fc's config, as the operator writes it under the
// plugin's `config:` key. The roots and the command exist so tests and
// containerised deployments can point the plugin at another tree.
type config struct {
	// SysfsRoot is where sysfs is mounted; default "/sys".
	SysfsRoot string `json:"sysfsRoot"`
	// DevRoot is where device files are; default "/dev".
	DevRoot string `json:"devRoot"`
	// Multipath is the multipath command: a name looked up in PATH, or an
	// absolute path; default "multipath".
	Multipath string `json:"multipath"`
	// StateDir holds the records of staged volumes; default
	// "/var/lib/podhost/volume-fc".
	StateDir string `json:"stateDir"`
	// CleanupBudget is how long Unstage keeps retrying, every
	// CleanupInterval, to flush and delete the devices of a volume;
	// default "1m". "0s" tries once.
	CleanupBudget sdk.Duration `json:"cleanupBudget"`
	// CleanupInterval is the wait between two tries; default "10s" (the
	// kubelet's). Tests shorten it.
	CleanupInterval sdk.Duration `json:"cleanupInterval"`
	// Metrics makes the plugin declare and serve volume metrics (statfs
	// figures, a block device's size); default true. With false the host
	// never asks for them.
	Metrics bool `json:"metrics"`
}

func defaultConfig() config {
	return config{SysfsRoot: "/sys", DevRoot: "/dev", Multipath: "multipath", StateDir: "/var/lib/podhost/volume-fc", CleanupBudget: sdk.Duration(time.Minute), CleanupInterval: sdk.Duration(10 * time.Second), Metrics: true}
}

// parseConfig decodes and validates a config, returning every problem with
// its field path.
func parseConfig(raw []byte) (config, []sdk.FieldError) {
	c := defaultConfig()
	if errs := sdk.DecodeConfig(raw, &c); len(errs) > 0 {
		return config{}, errs
	}
	var errs sdk.FieldErrors
	for _, root := range []struct{ field, path string }{{"sysfsRoot", c.SysfsRoot}, {"devRoot", c.DevRoot}, {"stateDir", c.StateDir}} {
		if !filepath.IsAbs(root.path) {
			errs.Addf(root.field, "must be an absolute path, got %q", root.path)
		}
	}
	if c.Multipath == "" || strings.Contains(c.Multipath, "/") && !filepath.IsAbs(c.Multipath) {
		errs.Addf("multipath", "must be a command name or an absolute path, got %q", c.Multipath)
	}
	if c.CleanupBudget < 0 {
		errs.Addf("cleanupBudget", "must not be negative, got %s", c.CleanupBudget)
	}
	if c.CleanupInterval <= 0 {
		errs.Addf("cleanupInterval", "must be positive, got %s", c.CleanupInterval)
	}
	if len(errs) > 0 {
		return config{}, errs
	}
	c.SysfsRoot, c.DevRoot, c.StateDir = filepath.Clean(c.SysfsRoot), filepath.Clean(c.DevRoot), filepath.Clean(c.StateDir)
	return c, nil
}
