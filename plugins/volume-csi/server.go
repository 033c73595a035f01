package main

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/podhost/podhost/host/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
)

// newPlugin describes volume-csi to the SDK.
func newPlugin(version string) sdk.Plugin {
	s := &server{}
	return sdk.Plugin{
		Name:      "volume-csi",
		Version:   version,
		Kind:      pluginapi.KindVolume,
		Volume:    s,
		Configure: s.configure,
	}
}

// server will translate the Volume service to CSI Node calls; until then
// every call is UNIMPLEMENTED.
type server struct {
	volumev1.UnimplementedVolumeServer
	cfg atomic.Pointer[config] // nil until Configure accepts a config
}

func (s *server) configure(_ context.Context, raw json.RawMessage) []sdk.FieldError {
	c, errs := parseConfig(raw)
	if len(errs) > 0 {
		return errs
	}
	s.cfg.Store(&c)
	return nil
}
