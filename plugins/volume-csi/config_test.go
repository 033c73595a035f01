package main

import (
	"testing"

	"github.com/podhost/podhost/plugins/internal/plugintest"
)

func TestParseConfig(t *testing.T) {
	plugintest.RunConfigCases(t, parseConfig, []plugintest.ConfigCase[config]{
		{
			Name:   "two drivers",
			Config: `{"drivers":[{"name":"a.csi","endpoint":"unix:///a.sock"},{"name":"b.csi","endpoint":"unix:///b.sock"}]}`,
			Want:   config{Drivers: []driver{{Name: "a.csi", Endpoint: "unix:///a.sock"}, {Name: "b.csi", Endpoint: "unix:///b.sock"}}},
		},
		{Name: "empty", Config: `{}`, WantErrs: []string{"drivers: needs at least one driver"}},
		{Name: "empty list", Config: `{"drivers":[]}`, WantErrs: []string{"drivers: needs at least one driver"}},
		{Name: "not a list", Config: `{"drivers":{"name":"a"}}`, WantErrs: []string{"drivers: want an array, got object"}},
		{
			Name:     "misspelt field",
			Config:   `{"drivers":[{"name":"a","endpoint":"unix:///a.sock"},{"name":"b","endpoit":"unix:///b.sock"}]}`,
			WantErrs: []string{"drivers[1].endpoit: unknown field"},
		},
		{
			Name:   "bad drivers",
			Config: `{"drivers":[{"name":"a","endpoint":"unix:///a.sock"},{"endpoint":"/b.sock"},{"name":"a","endpoint":"unix:///c.sock"}]}`,
			WantErrs: []string{
				"drivers[1].name: is required",
				`drivers[1].endpoint: must be a unix:// address, such as "unix:///run/plugin.sock"`,
				`drivers[2].name: "a" is already the name of drivers[0]`,
			},
		},
	})
}
