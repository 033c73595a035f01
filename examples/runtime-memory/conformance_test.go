package main

import (
	"testing"

	"github.com/podhost/podhost/sdk/runtimetest"
)

func TestConformance(t *testing.T) {
	runtimetest.Run(t, func(t *testing.T) runtimetest.Setup {
		return runtimetest.Setup{Plugin: newPlugin("test"), ExecSucceeds: []string{"true"}, ExecFails: []string{"false"}}
	})
}
