package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/podhost/podhost/sdk"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		want     config
		wantErrs []string
	}{
		{
			name:   "endpoint only",
			config: `{"endpoint":"unix:///run/containerd/containerd.sock"}`,
			want: config{
				Endpoint: "unix:///run/containerd/containerd.sock", socketPath: "/run/containerd/containerd.sock",
				addressPath:     "/run/containerd/containerd.sock",
				Timeouts:        timeouts{Runtime: sdk.Duration(2 * time.Minute), Image: sdk.Duration(10 * time.Minute)},
				ImagePullPolicy: "IfNotPresent",
				Namespace:       "k8s.io",
			},
		},
		{
			name:   "everything",
			config: `{"endpoint":"unix:///c.sock","timeouts":{"runtime":"30s","image":"1h"},"imagePullPolicy":"Never","address":"unix:///m.sock","namespace":"other"}`,
			want: config{
				Endpoint: "unix:///c.sock", socketPath: "/c.sock",
				Address: "unix:///m.sock", addressPath: "/m.sock",
				Timeouts:        timeouts{Runtime: sdk.Duration(30 * time.Second), Image: sdk.Duration(time.Hour)},
				ImagePullPolicy: "Never",
				Namespace:       "other",
			},
		},
		{name: "empty", config: `{}`, wantErrs: []string{"endpoint: is required"}},
		{name: "not unix", config: `{"endpoint":"tcp://x:1"}`, wantErrs: []string{`endpoint: must be a unix:// address, such as "unix:///run/plugin.sock"`}},
		{
			name:     "wrong types",
			config:   `{"endpoint":"unix:///c.sock","timeouts":{"runtime":30,"imgae":"1m"},"imagePullPolicy":true}`,
			wantErrs: []string{`timeouts.runtime: want a duration string such as "30s", got number`, "timeouts.imgae: unknown field", "imagePullPolicy: want a string, got boolean"},
		},
		{
			name:     "bad values",
			config:   `{"endpoint":"unix://relative.sock","timeouts":{"runtime":"0s","image":"-1m"},"imagePullPolicy":"Sometimes","address":"tcp://x:1","namespace":""}`,
			wantErrs: []string{"endpoint: must name an absolute socket path after unix://", `address: must be a unix:// address, such as "unix:///run/plugin.sock"`, "namespace: must not be empty", "timeouts.runtime: must be positive, got 0s", "timeouts.image: must be positive, got -1m0s", `imagePullPolicy: must be one of [IfNotPresent Always Never], got "Sometimes"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := parseConfig([]byte(tt.config))
			var gotErrs []string
			for _, e := range errs {
				gotErrs = append(gotErrs, e.Error())
			}
			if !reflect.DeepEqual(gotErrs, tt.wantErrs) {
				t.Errorf("errors: got %q; want %q", gotErrs, tt.wantErrs)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("config: got %+v; want %+v", got, tt.want)
			}
		})
	}
}
