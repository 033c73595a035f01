package main

import (
	"testing"

	"github.com/podhost/podhost/pluginapi"
	"github.com/podhost/podhost/plugins/internal/plugintest"
)

func TestPluginIsServable(t *testing.T) {
	plugintest.CheckServable(t, newPlugin, "volume-iscsi", pluginapi.KindVolume)
}
