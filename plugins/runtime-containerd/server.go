package main

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/podhost/podhost/host/pluginapi"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk"
)

// newPlugin describes runtime-containerd to the SDK.
func newPlugin(version string) sdk.Plugin {
	s := &server{}
	return sdk.Plugin{
		Name:      "runtime-containerd",
		Version:   version,
		Kind:      pluginapi.KindRuntime,
		Runtime:   s,
		Configure: s.configure,
		Probe:     s.probe,
	}
}

// server will translate the Runtime service to containerd calls; until
// then every call is UNIMPLEMENTED.
type server struct {
	runtimev1.UnimplementedRuntimeServer
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

func (s *server) probe(context.Context) (bool, string) {
	c := s.cfg.Load()
	if c == nil {
		return false, "not configured"
	}
	return probeSocket(c.socketPath)
}
