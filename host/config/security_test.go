package config_test

import (
	"strings"
	"testing"

	"github.com/podhost/podhost/host/config"
)

func TestPodSecurityConfig(t *testing.T) {
	for _, tc := range []struct {
		extra, wantErr string
	}{
		{"", ""},
		{"allowedUnsafeSysctls: [net.core.somaxconn, \"kernel.msg*\", fs.mqueue.msg_max]\nseccompProfileRoot: /etc/podhost/seccomp\n", ""},
		{"allowedUnsafeSysctls: [vm.swappiness]\n", "allowedUnsafeSysctls[0]"},
		{"allowedUnsafeSysctls: [\"kernel.*\"]\n", "allowedUnsafeSysctls[0]"},
		{"seccompProfileRoot: seccomp\n", "seccompProfileRoot"},
		{"clusterDNS: [10.96.0.10, \"fd00::a\"]\nclusterDomain: cluster.local\n", ""},
		{"clusterDNS: [10.96.0]\n", "clusterDNS[0]"},
		{"clusterDomain: Cluster_Local\n", "clusterDomain"},
		{"pluginRegistrationDir: /var/lib/kubelet/plugins_registry\n", ""},
		{"pluginRegistrationDir: plugins_registry\n", "pluginRegistrationDir"},
	} {
		cfg, err := config.Parse([]byte(shutdownDoc+tc.extra), "host.yaml")
		if err == nil {
			err = cfg.Validate(nil)
		}
		switch {
		case tc.wantErr == "" && err != nil && (strings.Contains(err.Error(), "allowedUnsafeSysctls") || strings.Contains(err.Error(), "seccompProfileRoot") || strings.Contains(err.Error(), "pluginRegistrationDir") ||
			strings.Contains(err.Error(), "cluster")):
			t.Errorf("%q: %v", tc.extra, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: err = %v; want an error naming %s", tc.extra, err, tc.wantErr)
		}
	}
}
