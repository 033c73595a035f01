package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
)

// TestSanity runs csi-sanity against the driver served in this process,
// with real staging and target dirs, loop devices and mounts.
func TestSanity(t *testing.T) {
	td := startTestDriver(t, nil)
	cfg := sanity.NewTestConfig()
	cfg.Address = td.endpoint
	cfg.StagingPath = filepath.Join(td.dir, "staging")
	cfg.TargetPath = filepath.Join(td.dir, "target")
	cfg.TestVolumeSize = 64 << 20
	began := time.Now()
	sanity.Test(t, cfg)
	t.Logf("csi-sanity took %s", time.Since(began).Round(time.Millisecond))
}
