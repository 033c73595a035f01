package localapi

import "time"

// PluginInfo is one supervised plugin as `host plugins list` shows it.
type PluginInfo struct {
	Name         string    `json:"name"`
	Kind         string    `json:"kind"`
	Version      string    `json:"version,omitempty"`
	State        string    `json:"state"`
	Ready        bool      `json:"ready"`
	Required     bool      `json:"required"`
	Restarts     int       `json:"restarts"`
	LastError    string    `json:"lastError,omitempty"`
	Capabilities []string  `json:"capabilities,omitempty"`
	PID          int       `json:"pid,omitempty"`
	Since        time.Time `json:"since,omitzero"`
}

// Views are the functions the server reads its answers from.
type Views struct {
	// Plugins lists the supervised plugins.
	Plugins func() []PluginInfo
	// Ready reports whether the host is ready, and why not.
	Ready func() (bool, string)
}
