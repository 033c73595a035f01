package deploy_test

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// unit is a parsed systemd unit file: section -> key -> values in order.
type unit map[string]map[string][]string

// parseUnit reads the subset of systemd's unit syntax the file uses:
// [Section] headers, Key=Value lines, '#' and ';' comments, blank lines and
// backslash continuations.
func parseUnit(text string) (unit, error) {
	u := unit{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	line, n := "", 0
	for sc.Scan() {
		n++
		raw := strings.TrimSpace(sc.Text())
		if line == "" && (raw == "" || raw[0] == '#' || raw[0] == ';') {
			continue
		}
		if strings.HasSuffix(raw, "\\") {
			line += strings.TrimSuffix(raw, "\\") + " "
			continue
		}
		line += raw
		switch {
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case section == "":
			return nil, fmt.Errorf("line %d: %q outside a section", n, line)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return nil, fmt.Errorf("line %d: %q is not Key=Value", n, line)
			}
			k = strings.TrimSpace(k)
			u[section][k] = append(u[section][k], strings.TrimSpace(v))
		}
		line = ""
	}
	return u, sc.Err()
}

// get returns the effective (last) value of a key.
func (u unit) get(section, key string) (string, bool) {
	v := u[section][key]
	if len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

func TestServiceUnit(t *testing.T) {
	b, err := os.ReadFile("podhost.service")
	if err != nil {
		t.Fatal(err)
	}
	u, err := parseUnit(string(b))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		section, key, want string
		why                string
	}{
		{"Service", "Type", "notify", "readiness is sent on NOTIFY_SOCKET"},
		{"Service", "NotifyAccess", "main", "only the host itself may notify"},
		{"Service", "KillMode", "process", "stopping the host must not kill containers"},
		{"Service", "Restart", "always", "the host is restarted whatever made it exit"},
		{"Service", "ExecStart", "/usr/local/bin/podhost run --config /etc/podhost/host.yaml", "install layout"},
		{"Service", "OOMScoreAdjust", "-999", "a node agent must not be the OOM killer's first choice"},
		{"Service", "WatchdogSec", "60s", "the host beats with its status every half of it"},
		{"Install", "WantedBy", "multi-user.target", "enabled at boot"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := u.get(tt.section, tt.key)
			if !ok || got != tt.want {
				t.Fatalf("[%s] %s = %q (set: %t), want %q: %s", tt.section, tt.key, got, ok, tt.want, tt.why)
			}
		})
	}
	for _, key := range []string{"RestartSec", "TimeoutStopSec", "LimitNOFILE"} {
		if _, ok := u.get("Service", key); !ok {
			t.Errorf("[Service] %s is not set", key)
		}
	}
	// Settings that would break the host or kill pods.
	forbidden := map[string]string{
		"PrivateTmp":    "plugin sockets and shared paths must stay visible",
		"KillSignal":    "the host stops gracefully on SIGTERM",
		"ExecStop":      "a stop command could reach the pods",
		"PrivateMounts": "volume mounts must reach the host's mount namespace",
	}
	for key, why := range forbidden {
		if v, ok := u.get("Service", key); ok {
			t.Errorf("[Service] %s=%s is set: %s", key, v, why)
		}
	}
}

func TestParseUnit(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
		want     string
	}{
		{"basic", "[Service]\nType=notify\n", true, "notify"},
		{"comments and blanks", "# c\n[Service]\n; c\n\nType = notify\n", true, "notify"},
		{"last value wins", "[Service]\nType=simple\nType=notify\n", true, "notify"},
		{"continuation", "[Service]\nType=no\\\ntify\n", true, "no tify"},
		{"outside a section", "Type=notify\n", false, ""},
		{"not key=value", "[Service]\nType notify\n", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := parseUnit(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%t", err, tt.ok)
			}
			if got, _ := u.get("Service", "Type"); tt.ok && got != tt.want {
				t.Fatalf("Type = %q, want %q", got, tt.want)
			}
		})
	}
}
