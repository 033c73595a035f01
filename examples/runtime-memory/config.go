package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/podhost/podhost/sdk"
)

// config is runtime-memory's config.
type config struct {
	// Images are present from the start, without a pull.
	Images []string `json:"images"`
	// Offline refuses every pull, so only Images can be used.
	Offline bool `json:"offline"`
}

// parseConfig decodes and validates a config, returning every problem.
func parseConfig(raw []byte) (config, []sdk.FieldError) {
	var c config
	if errs := sdk.DecodeConfig(raw, &c); len(errs) > 0 {
		return config{}, errs
	}
	var errs sdk.FieldErrors
	seen := map[string]int{}
	for i, name := range c.Images {
		if name == "" {
			errs.Addf(fmt.Sprintf("images[%d]", i), "must not be empty")
		} else if j, dup := seen[name]; dup {
			errs.Addf(fmt.Sprintf("images[%d]", i), "%q is already images[%d]", name, j)
		}
		seen[name] = i
	}
	return c, errs
}

// configure is the plugin's Configure: it applies a config only when all of
// it is valid.
func (m *memory) Configure(_ context.Context, raw json.RawMessage) []sdk.FieldError {
	c, errs := parseConfig(raw)
	if len(errs) > 0 {
		return errs
	}
	m.configure(c.Images, c.Offline)
	return nil
}
