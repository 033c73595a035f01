package main

import (
	"testing"
	"time"

	"github.com/podhost/podhost/plugins/internal/plugintest"
	"github.com/podhost/podhost/sdk"
)

func TestParseConfig(t *testing.T) {
	other := defaultConfig()
	other.SysfsRoot, other.DevRoot, other.Multipath, other.CleanupBudget, other.CleanupInterval = "/host/sys", "/host/dev", "/sbin/multipath", sdk.Duration(2*time.Minute), sdk.Duration(time.Second)
	noMetrics := defaultConfig()
	noMetrics.Metrics = false
	plugintest.RunConfigCases(t, parseConfig, []plugintest.ConfigCase[config]{
		{Name: "metrics off", Config: `{"metrics":false}`, Want: noMetrics},
		{Name: "defaults", Config: `{}`, Want: defaultConfig()},
		{Name: "other roots", Config: `{"sysfsRoot":"/host/sys/","devRoot":"/host/dev","multipath":"/sbin/multipath","cleanupBudget":"2m","cleanupInterval":"1s"}`, Want: other},
		{Name: "relative roots", Config: `{"sysfsRoot":"sys","devRoot":"","stateDir":"state"}`, WantErrs: []string{`sysfsRoot: must be an absolute path, got "sys"`, `devRoot: must be an absolute path, got ""`, `stateDir: must be an absolute path, got "state"`}},
		{Name: "bad command, budget and interval", Config: `{"multipath":"bin/multipath","cleanupBudget":"-1s","cleanupInterval":"0s"}`, WantErrs: []string{`multipath: must be a command name or an absolute path, got "bin/multipath"`, "cleanupBudget: must not be negative, got -1s", "cleanupInterval: must be positive, got 0s"}},
		{Name: "wrong type and unknown field", Config: `{"sysfsRoot":1,"devroot":"/dev"}`, WantErrs: []string{"sysfsRoot: want a string, got number", "devroot: unknown field"}},
	})
}
