package main

import (
	"testing"

	"github.com/podhost/podhost/plugins/internal/plugintest"
)

func TestParseConfig(t *testing.T) {
	plugintest.RunConfigCases(t, parseConfig, []plugintest.ConfigCase[config]{
		{Name: "defaults", Config: `{}`, Want: config{Iscsiadm: "iscsiadm", SysfsRoot: "/sys", DevRoot: "/dev"}},
		{Name: "absolute iscsiadm", Config: `{"iscsiadm":"/usr/sbin/iscsiadm","sysfsRoot":"/host/sys"}`, Want: config{Iscsiadm: "/usr/sbin/iscsiadm", SysfsRoot: "/host/sys", DevRoot: "/dev"}},
		{Name: "relative iscsiadm path", Config: `{"iscsiadm":"bin/iscsiadm"}`, WantErrs: []string{`iscsiadm: must be a command name or an absolute path, got "bin/iscsiadm"`}},
		{Name: "empty iscsiadm", Config: `{"iscsiadm":""}`, WantErrs: []string{`iscsiadm: must be a command name or an absolute path, got ""`}},
		{Name: "relative roots", Config: `{"sysfsRoot":"sys","devRoot":"dev"}`, WantErrs: []string{`sysfsRoot: must be an absolute path, got "sys"`, `devRoot: must be an absolute path, got "dev"`}},
		{Name: "wrong type", Config: `{"iscsiadm":["iscsiadm"]}`, WantErrs: []string{"iscsiadm: want a string, got array"}},
	})
}
