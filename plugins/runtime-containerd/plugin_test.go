package main

import (
	"testing"

	"github.com/podhost/podhost/sdk"
)

func TestPluginIsServable(t *testing.T) {
	p := newPlugin("1.2.3")
	if p.Name != "runtime-containerd" || p.Kind != sdk.KindRuntime || p.Version != "1.2.3" {
		t.Errorf("got name %q kind %q version %q; want %q %q %q", p.Name, p.Kind, p.Version, "runtime-containerd", sdk.KindRuntime, "1.2.3")
	}
	if _, err := sdk.ServeConfig(p); err != nil {
		t.Errorf("ServeConfig: %v", err)
	}
}
