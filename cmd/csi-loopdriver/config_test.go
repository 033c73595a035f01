package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

const baseConfig = "endpoint: unix:///run/csi.sock\nstateDir: /var/lib/loop\nnodeID: n1\n"

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string // substring; empty for success
		check   func(t *testing.T, c config)
	}{
		{name: "defaults", yaml: baseConfig, check: func(t *testing.T, c config) {
			if c.endpoint != "/run/csi.sock" || c.driverName != defaultDriverName || !c.stageUnstage || !c.volumeStats || c.defaultVolumeSize != 1<<30 {
				t.Errorf("config %+v", c)
			}
		}},
		{name: "plain socket path and toggles", yaml: "endpoint: /run/x.sock\nstateDir: /s\nnodeID: n\ncapabilities: {stageUnstage: false, volumeStats: false}\ndefaultVolumeSize: 64Mi\n", check: func(t *testing.T, c config) {
			if c.endpoint != "/run/x.sock" || c.stageUnstage || c.volumeStats || c.defaultVolumeSize != 64<<20 {
				t.Errorf("config %+v", c)
			}
		}},
		{name: "json", yaml: `{"endpoint": "/e.sock", "stateDir": "/s", "nodeID": "n", "faults": [{"rpc": "Probe", "action": "hang"}]}`, check: func(t *testing.T, c config) {
			if len(c.faults) != 1 || c.faults[0].action != actionHang {
				t.Errorf("faults %+v", c.faults)
			}
		}},
		{name: "faults", yaml: baseConfig + "faults:\n- {rpc: NodeStageVolume, action: fail, code: DEADLINE_EXCEEDED, times: 3}\n- {rpc: NodePublishVolume, action: delay, delay: 3s, volume: v}\n", check: func(t *testing.T, c config) {
			want := []fault{
				{rpc: "NodeStageVolume", action: actionFail, code: codes.DeadlineExceeded, times: 3},
				{rpc: "NodePublishVolume", action: actionDelay, delay: 3 * time.Second, volume: "v"},
			}
			if len(c.faults) != 2 || c.faults[0] != want[0] || c.faults[1] != want[1] {
				t.Errorf("faults %+v, want %+v", c.faults, want)
			}
		}},
		{name: "no endpoint", yaml: "stateDir: /s\nnodeID: n\n", wantErr: "endpoint: required"},
		{name: "relative endpoint", yaml: "endpoint: run/x.sock\nstateDir: /s\nnodeID: n\n", wantErr: "endpoint: \"run/x.sock\" is not an absolute"},
		{name: "no state dir", yaml: "endpoint: /e\nnodeID: n\n", wantErr: "stateDir: required"},
		{name: "relative state dir", yaml: "endpoint: /e\nstateDir: s\nnodeID: n\n", wantErr: "stateDir: \"s\" is not absolute"},
		{name: "no node", yaml: "endpoint: /e\nstateDir: /s\n", wantErr: "nodeID: required"},
		{name: "relative call log", yaml: baseConfig + "callLog: calls\n", wantErr: "callLog:"},
		{name: "bad size", yaml: baseConfig + "defaultVolumeSize: 1G\n", wantErr: "defaultVolumeSize: \"1G\""},
		{name: "small size", yaml: baseConfig + "defaultVolumeSize: 1Mi\n", wantErr: "defaultVolumeSize: 1Mi is below"},
		{name: "unknown field", yaml: baseConfig + "nodeName: x\n", wantErr: "unknown field \"nodeName\""},
		{name: "unknown rpc", yaml: baseConfig + "faults: [{rpc: NodeStage, action: hang}]\n", wantErr: "faults[0].rpc: \"NodeStage\""},
		{name: "unknown action", yaml: baseConfig + "faults: [{rpc: Probe, action: crash}]\n", wantErr: "faults[0].action: \"crash\""},
		{name: "unknown code", yaml: baseConfig + "faults: [{rpc: Probe, action: fail, code: Timeout}]\n", wantErr: "faults[0].code: \"Timeout\""},
		{name: "fail without code", yaml: baseConfig + "faults: [{rpc: Probe, action: fail}]\n", wantErr: "faults[0].code"},
		{name: "fail with OK", yaml: baseConfig + "faults: [{rpc: Probe, action: fail, code: OK}]\n", wantErr: "faults[0].code: OK"},
		{name: "delay without delay", yaml: baseConfig + "faults: [{rpc: Probe, action: delay}]\n", wantErr: "faults[0].delay"},
		{name: "code on a hang", yaml: baseConfig + "faults: [{rpc: Probe, action: hang, code: Internal}]\n", wantErr: "faults[0].code: only a fail fault"},
		{name: "delay on a fail", yaml: baseConfig + "faults: [{rpc: Probe, action: fail, code: Internal, delay: 1s}]\n", wantErr: "faults[0].delay: only a delay fault"},
		{name: "negative times", yaml: baseConfig + "faults: [{rpc: Probe, action: hang}, {rpc: Probe, action: hang, times: -1}]\n", wantErr: "faults[1].times: -1"},
		{name: "not yaml", yaml: "endpoint: [\n", wantErr: "parsing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig([]byte(tt.yaml))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			case tt.check != nil:
				tt.check(t, c)
			}
		})
	}
}

// FuzzParseConfig checks that no input crashes the parser and that what
// it accepts is a usable config.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(baseConfig))
	f.Add([]byte(baseConfig + "faults:\n- {rpc: NodeStageVolume, action: fail, code: DeadlineExceeded, times: 3}\n- {rpc: Probe, action: delay, delay: 1ms}\n"))
	f.Add([]byte(`{"endpoint": "/e", "stateDir": "/s", "nodeID": "n", "defaultVolumeSize": "9Ti"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseConfig(data)
		if err != nil {
			return
		}
		if !strings.HasPrefix(c.endpoint, "/") || !strings.HasPrefix(c.stateDir, "/") || c.nodeID == "" || c.defaultVolumeSize < minVolumeSize {
			t.Fatalf("accepted an unusable config %+v from %q", c, data)
		}
		for _, f := range c.faults {
			if !rpcNames[f.rpc] || f.times < 0 || (f.action == actionFail && f.code == codes.OK) || (f.action == actionDelay && f.delay <= 0) {
				t.Fatalf("accepted an unusable fault %+v from %q", f, data)
			}
		}
	})
}

func TestCapacityFor(t *testing.T) {
	const mi = 1 << 20
	tests := []struct {
		name                 string
		required, limit, def int64
		want                 int64
		wantErr              error
	}{
		{"default", 0, 0, 64 * mi, 64 * mi, nil},
		{"default capped by limit", 0, 32 * mi, 64 * mi, 32 * mi, nil},
		{"rounded to a MiB", 20*mi + 1, 0, 0, 21 * mi, nil},
		{"rounded to 512 under a tight limit", 20*mi + 1, 20*mi + 600, 0, 20*mi + 512, nil},
		{"minimum", 1, 0, 0, minVolumeSize, nil},
		{"limit below minimum", 0, mi, 64 * mi, 0, errOutOfRange},
		{"required above limit", 2 * mi, mi, 0, 0, errInvalid},
		{"negative", -1, 0, 0, 0, errInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := capacityFor(tt.required, tt.limit, tt.def)
			if got != tt.want || (tt.wantErr == nil) != (err == nil) || (tt.wantErr != nil && !strings.Contains(err.Error(), tt.wantErr.Error())) {
				t.Errorf("capacityFor = %d, %v; want %d, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestDocConfigParses keeps the example config of the command's doc
// (main.go) valid.
func TestDocConfigParses(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	var example []string
	for line := range strings.Lines(string(src)) {
		if yamlLine, ok := strings.CutPrefix(line, "//\t"); ok {
			example = append(example, yamlLine)
		} else if len(example) > 0 {
			break
		}
	}
	c, err := parseConfig([]byte(strings.Join(example, "")))
	if err != nil {
		t.Fatalf("the doc's example config: %v\n%s", err, strings.Join(example, ""))
	}
	if len(c.faults) != 3 || c.callLog == "" {
		t.Errorf("the doc's example config parsed to %+v", c)
	}
}
