package config

import (
	"strings"
	"testing"
)

func TestAPITCPListener(t *testing.T) {
	base := "apiVersion: podhost.dev/v1alpha1\nkind: HostConfig\nrootDir: /var/lib/podhost\n" +
		"plugins:\n  - {name: rt, kind: runtime, path: /bin/rt}\n"
	for _, tc := range []struct {
		name, api, want string
	}{
		{"socket only", "", ""},
		{"tcp with token", "api: {tcpAddress: '127.0.0.1:7443', tokenFile: /etc/podhost/token}\n", ""},
		{"tcp without token", "api: {tcpAddress: '127.0.0.1:7443'}\n", "api.tokenFile: required field is missing"},
		{"relative token", "api: {tcpAddress: ':7443', tokenFile: token}\n", "api.tokenFile: want an absolute path"},
		{"bad address", "api: {tcpAddress: 'localhost', tokenFile: /t}\n", "api.tcpAddress: want host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(base+tc.api), "host.yaml")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Parse: %v; want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Parse: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}
