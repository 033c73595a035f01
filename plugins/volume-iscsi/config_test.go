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
		{name: "defaults", config: `{}`, want: config{Iscsiadm: "iscsiadm", SysfsRoot: "/sys", DevRoot: "/dev"}},
		{name: "absolute iscsiadm", config: `{"iscsiadm":"/usr/sbin/iscsiadm","sysfsRoot":"/host/sys"}`, want: config{Iscsiadm: "/usr/sbin/iscsiadm", SysfsRoot: "/host/sys", DevRoot: "/dev"}},
		{name: "relative iscsiadm path", config: `{"iscsiadm":"bin/iscsiadm"}`, wantErrs: []string{`iscsiadm: must be a command name or an absolute path, got "bin/iscsiadm"`}},
		{name: "empty iscsiadm", config: `{"iscsiadm":""}`, wantErrs: []string{`iscsiadm: must be a command name or an absolute path, got ""`}},
		{name: "relative roots", config: `{"sysfsRoot":"sys","devRoot":"dev"}`, wantErrs: []string{`sysfsRoot: must be an absolute path, got "sys"`, `devRoot: must be an absolute path, got "dev"`}},
		{name: "wrong type", config: `{"iscsiadm":["iscsiadm"]}`, wantErrs: []string{"iscsiadm: want a string, got array"}},
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
