package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/host/config"
)

const shutdownDoc = `apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: /var/lib/podhost
pluginDir: /usr/libexec/podhost/plugins
plugins:
  - {name: containerd, kind: runtime, path: runtime-containerd}
`

func TestShutdownGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		extra   string
		want    time.Duration
		wantErr string
	}{
		{"", config.DefaultShutdownGracePeriod, ""},
		{"shutdownGracePeriod: 10s\n", 10 * time.Second, ""},
		{"shutdownGracePeriod: 0s\n", 0, ""},
		{"shutdownGracePeriod: -1s\n", 0, "shutdownGracePeriod"},
		{"shutdownGracePeriod: soon\n", 0, "shutdownGracePeriod"},
	} {
		cfg, err := config.Parse([]byte(shutdownDoc+tc.extra), "host.yaml")
		if err == nil {
			err = cfg.Validate(nil)
		}
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err = %v; want an error naming %s", tc.extra, err, tc.wantErr)
			}
		case err != nil && strings.Contains(err.Error(), "shutdownGracePeriod"):
			t.Errorf("%q: %v", tc.extra, err)
		case cfg == nil || cfg.ShutdownGracePeriod != tc.want:
			t.Errorf("%q: shutdownGracePeriod = %v; want %s", tc.extra, cfg, tc.want)
		}
	}
}
