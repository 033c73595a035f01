package main

import (
	"testing"

	"github.com/podhost/podhost/sdk/volumetest"
)

func TestConformance(t *testing.T) {
	volumetest.Run(t, func(t *testing.T) volumetest.Setup {
		return volumetest.Setup{Plugin: newPlugin("test")}
	})
}
