package main

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/podhost/podhost/internal/testutil"
)

// TestRunLogFormat runs the host with each logFormat until its required
// plugin is refused, and reads what it logged on stderr.
func TestRunLogFormat(t *testing.T) {
	t.Setenv(pluginModeEnv, "1")
	for _, tc := range []struct {
		format string
		json   bool
	}{
		{"", false},
		{"text", false},
		{"json", true},
	} {
		t.Run("format "+tc.format, func(t *testing.T) {
			extra := "    config: {reject: true}\n"
			if tc.format != "" {
				extra += "logFormat: " + tc.format + "\n"
			}
			path, _ := writeConfig(t, extra)
			// Not execute's bytes.Buffer: go-plugin's stdio goroutine may
			// still log after run returns.
			var errOut testutil.SyncBuffer
			cmd := newRootCommand()
			cmd.SetArgs([]string{"run", "--config", path})
			cmd.SetOut(io.Discard)
			cmd.SetErr(&errOut)
			var exit exitError
			if err := cmd.ExecuteContext(t.Context()); !errors.As(err, &exit) || exit.code != 1 {
				t.Fatalf("run: %v; want exit code 1 when the required plugin is refused\nstderr: %s", err, errOut.String())
			}
			stderr := errOut.String()
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			stopped := false
			for _, line := range lines {
				var entry map[string]any
				isJSON := json.Unmarshal([]byte(line), &entry) == nil
				if isJSON != tc.json {
					t.Fatalf("line %q: JSON %t; want %t", line, isJSON, tc.json)
				}
				if tc.json && entry["@message"] == "host stopped" && entry["@level"] == "error" && entry["@module"] == "host" {
					stopped = true
				}
				if !tc.json && strings.Contains(line, "[ERROR] host: host stopped") {
					stopped = true
				}
			}
			if !stopped {
				t.Errorf("no error line saying the host stopped:\n%s", stderr)
			}
		})
	}
}
