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
		{name: "defaults", config: `{}`, want: config{SysfsRoot: "/sys", DevRoot: "/dev"}},
		{name: "other roots", config: `{"sysfsRoot":"/host/sys/","devRoot":"/host/dev"}`, want: config{SysfsRoot: "/host/sys", DevRoot: "/host/dev"}},
		{name: "relative roots", config: `{"sysfsRoot":"sys","devRoot":""}`, wantErrs: []string{`sysfsRoot: must be an absolute path, got "sys"`, `devRoot: must be an absolute path, got ""`}},
		{name: "wrong type and unknown field", config: `{"sysfsRoot":1,"devroot":"/dev"}`, wantErrs: []string{"sysfsRoot: want a string, got number", "devroot: unknown field"}},
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
			if got != tt.want {
				t.Errorf("config: got %+v; want %+v", got, tt.want)
			}
		})
	}
}
