package main

import (
	"testing"

	"github.com/podhost/podhost/plugins/internal/plugintest"
)

func TestParseConfig(t *testing.T) {
	plugintest.RunConfigCases(t, parseConfig, []plugintest.ConfigCase[config]{
		{Name: "defaults", Config: `{}`, Want: config{SysfsRoot: "/sys", DevRoot: "/dev"}},
		{Name: "other roots", Config: `{"sysfsRoot":"/host/sys/","devRoot":"/host/dev"}`, Want: config{SysfsRoot: "/host/sys", DevRoot: "/host/dev"}},
		{Name: "relative roots", Config: `{"sysfsRoot":"sys","devRoot":""}`, WantErrs: []string{`sysfsRoot: must be an absolute path, got "sys"`, `devRoot: must be an absolute path, got ""`}},
		{Name: "wrong type and unknown field", Config: `{"sysfsRoot":1,"devroot":"/dev"}`, WantErrs: []string{"sysfsRoot: want a string, got number", "devroot: unknown field"}},
	})
}
