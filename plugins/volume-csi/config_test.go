package main

import (
	"testing"
	"time"

	"github.com/podhost/podhost/plugins/internal/plugintest"
	"github.com/podhost/podhost/sdk"
)

func TestParseConfig(t *testing.T) {
	plugintest.RunConfigCases(t, parseConfig, []plugintest.ConfigCase[config]{
		{
			Name:   "two drivers",
			Config: `{"drivers":[{"name":"a.csi","endpoint":"unix:///a.sock"},{"name":"b.csi","endpoint":"unix:///b.sock","timeout":"30s"}],"stateDir":"/var/lib/x"}`,
			Want: config{
				Drivers:  []driver{{Name: "a.csi", Endpoint: "unix:///a.sock"}, {Name: "b.csi", Endpoint: "unix:///b.sock", Timeout: sdk.Duration(30 * time.Second)}},
				StateDir: "/var/lib/x",
			},
		},
		{Name: "empty: drivers register at run time", Config: `{}`, Want: config{}},
		{Name: "empty list", Config: `{"drivers":[]}`, Want: config{Drivers: []driver{}}},
		{Name: "not a list", Config: `{"drivers":{"name":"a"}}`, WantErrs: []string{"drivers: want an array, got object"}},
		{
			Name:     "misspelt field",
			Config:   `{"drivers":[{"name":"a","endpoint":"unix:///a.sock"},{"name":"b","endpoit":"unix:///b.sock"}]}`,
			WantErrs: []string{"drivers[1].endpoit: unknown field"},
		},
		{
			Name:   "bad drivers",
			Config: `{"drivers":[{"name":"a","endpoint":"unix:///a.sock"},{"endpoint":"/b.sock"},{"name":"a","endpoint":"unix:///c.sock","timeout":"-1s"}],"stateDir":"rel"}`,
			WantErrs: []string{
				"drivers[1].name: is required",
				`drivers[1].endpoint: must be a unix:// address, such as "unix:///run/plugin.sock"`,
				`drivers[2].name: "a" is already the name of drivers[0]`,
				"drivers[2].timeout: must not be negative, got -1s",
				`stateDir: must be an absolute path, got "rel"`,
			},
		},
		{
			Name:     "timeout not a duration",
			Config:   `{"drivers":[{"name":"a","endpoint":"unix:///a.sock","timeout":30}]}`,
			WantErrs: []string{`drivers[0].timeout: want a duration string such as "30s", got number`},
		},
	})
}

func TestDriverTimeout(t *testing.T) {
	tests := []struct {
		set  sdk.Duration
		want time.Duration
	}{
		{0, 2 * time.Minute},
		{sdk.Duration(time.Second), time.Second},
	}
	for _, tt := range tests {
		if got := (driver{Timeout: tt.set}).timeout(); got != tt.want {
			t.Errorf("timeout with %v set: got %v; want %v", tt.set, got, tt.want)
		}
	}
}
