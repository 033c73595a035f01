package main

import (
	"sync/atomic"
	"time"

	"github.com/podhost/podhost/plugins/internal/scsi"
	"github.com/podhost/podhost/plugins/internal/scsivolume"
	"github.com/podhost/podhost/plugins/internal/volumeskeleton"
	"github.com/podhost/podhost/sdk"
)

// newPlugin describes volume-iscsi to the SDK.
func newPlugin(version string) sdk.Plugin {
	s := newServer()
	return sdk.Plugin{
		Name:         "volume-iscsi",
		Version:      version,
		Kind:         sdk.KindVolume,
		Capabilities: []string{sdk.CapVolumeISCSI, sdk.CapVolumeMetrics, sdk.CapVolumeBlock, sdk.CapVolumeReconstruct},
		Volume:       s,
		Configure:    volumeskeleton.Configure(&s.cfg, parseConfig),
	}
}

// server is the shared SCSI volume server over the iSCSI transport.
type server struct {
	*scsivolume.Server
	cfg  atomic.Pointer[config]
	wait func(time.Duration) <-chan time.Time // time.After; tests make it immediate
}

func newServer() *server {
	s := &server{wait: time.After}
	c := defaultConfig()
	s.cfg.Store(&c)
	tree := func() scsi.Tree { c := s.cfg.Load(); return scsi.Tree{Sys: c.SysfsRoot, Dev: c.DevRoot} }
	t := &iscsi{cfg: s.cfg.Load, adm: func() scsi.ISCSI {
		return scsi.ISCSI{Tree: tree(), Run: scsi.Exec{}, Iscsiadm: s.cfg.Load().Iscsiadm, Wait: s.wait}
	}}
	s.Server = &scsivolume.Server{Metrics: func() bool { return s.cfg.Load().Metrics }, Volumes: &scsivolume.Volumes{
		Transport: t,
		Tree:      tree,
		StateDir:  func() string { return s.cfg.Load().StateDir },
	}}
	return s
}
