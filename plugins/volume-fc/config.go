package main

import (
	"path/filepath"

	"github.com/podhost/podhost/sdk"
)

// config is volume-fc's config, as the operator writes it under the
// plugin's `config:` key. The roots exist so tests and containerised
// deployments can point the plugin at another tree.
type config struct {
	// SysfsRoot is where sysfs is mounted; default "/sys".
	SysfsRoot string `json:"sysfsRoot"`
	// DevRoot is where device files are; default "/dev".
	DevRoot string `json:"devRoot"`
}

// parseConfig decodes and validates a config, returning every problem with
// its field path.
func parseConfig(raw []byte) (config, []sdk.FieldError) {
	c := config{SysfsRoot: "/sys", DevRoot: "/dev"}
	if errs := sdk.DecodeConfig(raw, &c); len(errs) > 0 {
		return config{}, errs
	}
	var errs sdk.FieldErrors
	for _, root := range []struct{ field, path string }{{"sysfsRoot", c.SysfsRoot}, {"devRoot", c.DevRoot}} {
		if !filepath.IsAbs(root.path) {
			errs.Addf(root.field, "must be an absolute path, got %q", root.path)
		}
	}
	if len(errs) > 0 {
		return config{}, errs
	}
	c.SysfsRoot, c.DevRoot = filepath.Clean(c.SysfsRoot), filepath.Clean(c.DevRoot)
	return c, nil
}
