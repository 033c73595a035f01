package main

import (
	"path/filepath"
	"strings"

	"github.com/podhost/podhost/sdk"
)

// config is volume-iscsi's config, as the operator writes it under the
// plugin's `config:` key. The roots and commands exist so tests and
// containerised deployments can point the plugin at another tree.
type config struct {
	// Iscsiadm is the iscsiadm command: a name looked up in PATH, or an
	// absolute path; default "iscsiadm".
	Iscsiadm string `json:"iscsiadm"`
	// Multipath is the multipath command, likewise; default "multipath".
	Multipath string `json:"multipath"`
	// SysfsRoot is where sysfs is mounted; default "/sys".
	SysfsRoot string `json:"sysfsRoot"`
	// DevRoot is where device files are; default "/dev".
	DevRoot string `json:"devRoot"`
	// StateDir holds the records of staged volumes; default
	// "/var/lib/podhost/volume-iscsi".
	StateDir string `json:"stateDir"`
	// Metrics makes the plugin declare and serve volume metrics (statfs
	// figures, a block device's size); default true. With false the host
	// never asks for them.
	Metrics bool `json:"metrics"`
}

func defaultConfig() config {
	return config{Iscsiadm: "iscsiadm", Multipath: "multipath", SysfsRoot: "/sys", DevRoot: "/dev", StateDir: "/var/lib/podhost/volume-iscsi", Metrics: true}
}

// parseConfig decodes and validates a config, returning every problem with
// its field path.
func parseConfig(raw []byte) (config, []sdk.FieldError) {
	c := defaultConfig()
	if errs := sdk.DecodeConfig(raw, &c); len(errs) > 0 {
		return config{}, errs
	}
	var errs sdk.FieldErrors
	for _, cmd := range []struct{ field, path string }{{"iscsiadm", c.Iscsiadm}, {"multipath", c.Multipath}} {
		if cmd.path == "" || strings.Contains(cmd.path, "/") && !filepath.IsAbs(cmd.path) {
			errs.Addf(cmd.field, "must be a command name or an absolute path, got %q", cmd.path)
		}
	}
	for _, root := range []struct{ field, path string }{{"sysfsRoot", c.SysfsRoot}, {"devRoot", c.DevRoot}, {"stateDir", c.StateDir}} {
		if !filepath.IsAbs(root.path) {
			errs.Addf(root.field, "must be an absolute path, got %q", root.path)
		}
	}
	if len(errs) > 0 {
		return config{}, errs
	}
	c.SysfsRoot, c.DevRoot, c.StateDir = filepath.Clean(c.SysfsRoot), filepath.Clean(c.DevRoot), filepath.Clean(c.StateDir)
	return c, nil
}
