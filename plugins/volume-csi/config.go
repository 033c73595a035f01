package main

import (
	"fmt"

	"github.com/podhost/podhost/sdk"
)

// config is volume-csi's config, as the operator writes it under the
// plugin's `config:` key.
type config struct {
	// Drivers are the CSI node plugins a volume may name.
	Drivers []driver `json:"drivers"`
}

// driver is one CSI node plugin.
type driver struct {
	// Name is the CSI driver name volumes use, e.g. "ebs.csi.aws.com".
	Name string `json:"name"`
	// Endpoint is the driver's socket, e.g. "unix:///var/lib/csi/ebs.sock".
	Endpoint string `json:"endpoint"`
}

// parseConfig decodes and validates a config, returning every problem with
// its field path.
func parseConfig(raw []byte) (config, []sdk.FieldError) {
	var c config
	if errs := sdk.DecodeConfig(raw, &c); len(errs) > 0 {
		return config{}, errs
	}
	var errs sdk.FieldErrors
	if len(c.Drivers) == 0 {
		errs.Addf("drivers", "needs at least one driver")
	}
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
	}
	if len(errs) > 0 {
		return config{}, errs
	}
	return c, nil
}
