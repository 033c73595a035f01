package config

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/podhost/podhost/pluginapi"
)

// Plugin is a plugin entry resolved for the supervisor: plain values, the
// path absolute and the defaults applied. cmd/host maps it onto the
// supervisor's own spec type.
type Plugin struct {
	Name string
	Kind pluginapi.Kind
	// Path is the absolute path of the binary.
	Path string
	Args []string
	// SHA256 is the pinned checksum in lower-case hex, or "" for none.
	SHA256 string
	// Config is the entry's config as a JSON object, or nil if it has none.
	Config   json.RawMessage
	Required bool
}

// PluginSpecs resolves the plugin entries, in the order of the document,
// against the current PluginDir. The results share no memory with c.
func (c *HostConfig) PluginSpecs() []Plugin {
	specs := make([]Plugin, 0, len(c.Plugins))
	for _, pl := range c.Plugins {
		specs = append(specs, Plugin{
			Name:     pl.Name,
			Kind:     pl.Kind,
			Path:     c.resolve(pl.Path),
			Args:     slices.Clone(pl.Args),
			SHA256:   strings.ToLower(pl.SHA256),
			Config:   slices.Clone(pl.Config),
			Required: pl.Required == nil || *pl.Required,
		})
	}
	return specs
}

// applyDefaults fills in what the document left out. A duration written as
// 0s stays zero, for check to refuse.
func (c *HostConfig) applyDefaults() {
	if c.LogLevel == "" {
		c.LogLevel = DefaultLogLevel
	}
	c.applyLogDefaults()
	const b = "supervision.restartBackoff."
	for _, f := range []struct {
		path string
		d    *time.Duration
		def  time.Duration
	}{
		{"supervision.startTimeout", &c.Supervision.StartTimeout, DefaultStartTimeout},
		{"supervision.probeInterval", &c.Supervision.ProbeInterval, DefaultProbeInterval},
		{b + "initial", &c.Supervision.RestartBackoff.Initial, DefaultBackoffInitial},
		{b + "max", &c.Supervision.RestartBackoff.Max, DefaultBackoffMax},
		{b + "resetAfter", &c.Supervision.RestartBackoff.ResetAfter, DefaultBackoffResetAfter},
	} {
		if *f.d == 0 && !c.meta.setNonNull(f.path) {
			*f.d = f.def
		}
	}
	if c.ShutdownGracePeriod == 0 && !c.meta.setNonNull("shutdownGracePeriod") {
		c.ShutdownGracePeriod = DefaultShutdownGracePeriod
	}
	if c.API.Socket == "" && filepath.IsAbs(c.RootDir) {
		c.API.Socket = filepath.Join(c.RootDir, DefaultSocketName)
	}
	for i := range c.Plugins {
		if c.Plugins[i].Required == nil {
			c.Plugins[i].Required = new(true)
		}
	}
}
