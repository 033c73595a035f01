package sdk

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that a config writes as a string such as
// "30s" or "1m30s". Use it for config fields with DecodeConfig.
type Duration time.Duration

// UnmarshalJSON accepts a string that time.ParseDuration accepts.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if got := jsonKind(b); got != "string" {
		return fmt.Errorf("want a duration string such as \"30s\", got %s", got)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as \"30s\", got %q", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string, e.g. "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// String is the duration as time.Duration prints it.
func (d Duration) String() string { return time.Duration(d).String() }
