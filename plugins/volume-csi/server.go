package main

import (
	"sync/atomic"

	"github.com/podhost/podhost/plugins/internal/volumeskeleton"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
)

// newPlugin describes volume-csi to the SDK.
func newPlugin(version string) sdk.Plugin {
	s := &server{}
	return sdk.Plugin{
		Name:      "volume-csi",
		Version:   version,
		Kind:      sdk.KindVolume,
		Volume:    s,
		Configure: volumeskeleton.Configure(&s.cfg, parseConfig),
	}
}

// server will translate the Volume service to CSI Node calls; until then
// every call is UNIMPLEMENTED.
type server struct {
	volumev1.UnimplementedVolumeServer
	cfg atomic.Pointer[config] // nil until Configure accepts a config
}
