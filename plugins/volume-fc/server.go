package main

import (
	"sync/atomic"
	"time"

	"github.com/podhost/podhost/plugins/internal/scsi"
	"github.com/podhost/podhost/plugins/internal/scsivolume"
	"github.com/podhost/podhost/plugins/internal/volumeskeleton"
	"github.com/podhost/podhost/sdk"
)

// newPlugin describes volume-fc to the SDK.
func newPlugin(version string) sdk.Plugin {
	s := newServer()
	return sdk.Plugin{
		Name:         "volume-fc",
		Version:      version,
		Kind:         sdk.KindVolume,
		Capabilities: []string{sdk.CapVolumeFC, sdk.CapVolumeMetrics, sdk.CapVolumeBlock, sdk.CapVolumeReconstruct},
		Volume:       s,
		Configure:    volumeskeleton.Configure(&s.cfg, parseConfig),
	}
}

// server is the shared SCSI volume server over the FC transport.
type server struct {
	*scsivolume.Server
	cfg atomic.Pointer[config]
	fc  *fc
}

func newServer() *server {
	s := &server{}
	c := defaultConfig()
	s.cfg.Store(&c)
	s.fc = &fc{cfg: s.cfg.Load, run: scsi.Exec{}, wait: time.After}
	s.Server = &scsivolume.Server{RequiresAttach: true, Metrics: func() bool { return s.cfg.Load().Metrics }, Volumes: &scsivolume.Volumes{
		Transport: s.fc,
		Tree:      s.fc.tree,
		StateDir:  func() string { return s.cfg.Load().StateDir },
	}}
	return s
}
