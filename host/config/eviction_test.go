package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/host/config"
)

func TestEvictionHard(t *testing.T) {
	for _, tc := range []struct {
		extra   string
		wantErr string
	}{
		{"", ""},
		{"evictionHard: {memory.available: 500Mi, nodefs.available: 12.5%, imagefs.available: 0%}\n", ""},
		{"evictionHard: {memory.free: 1Gi}\n", `evictionHard.memory.free: unknown signal "memory.free"`},
		{"evictionHard: {nodefs.available: 110%}\n", "evictionHard.nodefs.available: want a percentage"},
		{"evictionHard: {nodefs.inodesFree: lots}\n", "evictionHard.nodefs.inodesFree: want a quantity"},
		{"evictionHard: {memory.available: -1Mi}\n", "evictionHard.memory.available: want a quantity"},
		{"evictionPressureTransitionPeriod: 30s\n", ""},
		{"evictionPressureTransitionPeriod: -1s\n", "evictionPressureTransitionPeriod"},
	} {
		_, err := config.Parse([]byte(shutdownDoc+tc.extra), "host.yaml")
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.extra, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%q: err = %v; want one with %q", tc.extra, err, tc.wantErr)
		}
	}
	cfg, err := config.Parse([]byte(shutdownDoc+"evictionHard: {memory.available: 1Gi}\nevictionPressureTransitionPeriod: 30s\n"), "host.yaml")
	if err != nil || cfg.EvictionHard["memory.available"] != "1Gi" || cfg.EvictionPressureTransitionPeriod != 30*time.Second {
		t.Errorf("decoded %+v, %v", cfg, err)
	}
}
