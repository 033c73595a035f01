package main

import (
	"reflect"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		want     config
		wantErrs []string
	}{
		{
			name:   "two drivers",
			config: `{"drivers":[{"name":"a.csi","endpoint":"unix:///a.sock"},{"name":"b.csi","endpoint":"unix:///b.sock"}]}`,
			want:   config{Drivers: []driver{{Name: "a.csi", Endpoint: "unix:///a.sock"}, {Name: "b.csi", Endpoint: "unix:///b.sock"}}},
		},
		{name: "empty", config: `{}`, wantErrs: []string{"drivers: needs at least one driver"}},
		{name: "empty list", config: `{"drivers":[]}`, wantErrs: []string{"drivers: needs at least one driver"}},
		{name: "not a list", config: `{"drivers":{"name":"a"}}`, wantErrs: []string{"drivers: want an array, got object"}},
		{
			name:     "misspelt field",
			config:   `{"drivers":[{"name":"a","endpoint":"unix:///a.sock"},{"name":"b","endpoit":"unix:///b.sock"}]}`,
			wantErrs: []string{"drivers[1].endpoit: unknown field"},
		},
		{
			name:   "bad drivers",
			config: `{"drivers":[{"name":"a","endpoint":"unix:///a.sock"},{"endpoint":"/b.sock"},{"name":"a","endpoint":"unix:///c.sock"}]}`,
			wantErrs: []string{
				"drivers[1].name: is required",
				`drivers[1].endpoint: must be a unix:// address, such as "unix:///run/plugin.sock"`,
				`drivers[2].name: "a" is already the name of drivers[0]`,
			},
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
