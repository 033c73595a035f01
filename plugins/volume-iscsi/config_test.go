package main

import (
	"testing"

	"github.com/podhost/podhost/plugins/internal/plugintest"
)

func TestParseConfig(t *testing.T) {
	other := defaultConfig()
	other.Iscsiadm, other.SysfsRoot, other.DevRoot = "/usr/sbin/iscsiadm", "/host/sys", "/host/dev"
	noMetrics := defaultConfig()
	noMetrics.Metrics = false
	plugintest.RunConfigCases(t, parseConfig, []plugintest.ConfigCase[config]{
		{Name: "metrics off", Config: `{"metrics":false}`, Want: noMetrics},
		{Name: "defaults", Config: `{}`, Want: defaultConfig()},
		{Name: "other paths", Config: `{"iscsiadm":"/usr/sbin/iscsiadm","sysfsRoot":"/host/sys/","devRoot":"/host/dev"}`, Want: other},
		{Name: "bad paths", Config: `{"iscsiadm":"sbin/iscsiadm","multipath":"","devRoot":"dev"}`, WantErrs: []string{`iscsiadm: must be a command name or an absolute path, got "sbin/iscsiadm"`, `multipath: must be a command name or an absolute path, got ""`, `devRoot: must be an absolute path, got "dev"`}},
		{Name: "unknown field", Config: `{"iscsiAdm":"x"}`, WantErrs: []string{"iscsiAdm: unknown field"}},
	})
}
