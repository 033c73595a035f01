package supervisor

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/podhost/podhost/pluginapi"
)

// PluginSpec is one configured plugin, as the host's config layer produces
// it.
type PluginSpec struct {
	// Name identifies the plugin in the host (logs, `podhost plugins list`,
	// Manager accessors). Unique.
	Name string
	// Kind is what the plugin must provide; GetInfo must agree.
	Kind pluginapi.Kind
	// Path is the absolute path of the plugin executable.
	Path string
	// Args are passed to the executable.
	Args []string
	// SHA256, when set, pins the executable: hex sha256 of the file,
	// checked at every launch.
	SHA256 string
	// Config is the plugin's own config, a JSON object, passed to
	// Configure at every launch; empty means "{}".
	Config json.RawMessage
	// Required plugins make Manager.Start fail when they cannot be started.
	Required bool
}

// validate checks what the host can check without launching the plugin.
func (s PluginSpec) validate() error {
	var errs []error
	if s.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if !s.Kind.Valid() {
		errs = append(errs, fmt.Errorf("kind %q is not one of %v", s.Kind, pluginapi.Kinds))
	}
	if !filepath.IsAbs(s.Path) {
		errs = append(errs, fmt.Errorf("path %q is not absolute", s.Path))
	}
	if s.SHA256 != "" {
		if b, err := hex.DecodeString(s.SHA256); err != nil || len(b) != 32 {
			errs = append(errs, fmt.Errorf("sha256 %q is not 64 hex digits", s.SHA256))
		}
	}
	if len(s.Config) > 0 && !json.Valid(s.Config) {
		errs = append(errs, errors.New("config is not valid JSON"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("plugin %q: %w", s.Name, err)
	}
	return nil
}

// validateSpecs checks every spec and that names are unique.
func validateSpecs(specs []PluginSpec) error {
	var errs []error
	seen := make(map[string]bool, len(specs))
	for _, s := range specs {
		if err := s.validate(); err != nil {
			errs = append(errs, err)
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("plugin %q is configured twice", s.Name))
		}
		seen[s.Name] = true
	}
	return errors.Join(errs...)
}
