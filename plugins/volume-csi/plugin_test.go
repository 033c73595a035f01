package main

import (
	"testing"

	"github.com/podhost/podhost/plugins/internal/plugintest"
	"github.com/podhost/podhost/sdk"
)

func TestPluginIsServable(t *testing.T) {
	plugintest.CheckServable(t, newPlugin, "volume-csi", sdk.KindVolume)
}
