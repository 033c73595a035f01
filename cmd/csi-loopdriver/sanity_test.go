package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
)

// csi-sanity runs its specs once per process, so the other runs (block
// mode, the built binary) re-execute this test binary with these set.
const (
	// envSanityAccess set to "block" runs the block-mode specs.
	envSanityAccess = "CSI_LOOPDRIVER_SANITY_ACCESS"
	// envSanityEndpoint names the socket of a driver already running.
	envSanityEndpoint = "CSI_LOOPDRIVER_SANITY_ENDPOINT"
)

// TestSanity runs csi-sanity against the driver served in this process
// (or the one envSanityEndpoint names), with real staging and target
// dirs, loop devices and mounts.
func TestSanity(t *testing.T) {
	requireRoot(t)
	endpoint, dir := os.Getenv(envSanityEndpoint), ""
	if endpoint == "" {
		td := startTestDriver(t, nil)
		endpoint, dir = td.endpoint, td.dir
	} else {
		dir = t.TempDir()
		t.Cleanup(func() { cleanupHost(t, dir, "") })
	}
	cfg := sanity.NewTestConfig()
	cfg.Address = endpoint
	cfg.StagingPath = filepath.Join(dir, "staging")
	cfg.TargetPath = filepath.Join(dir, "target")
	cfg.TestVolumeSize = 64 << 20
	cfg.TestVolumeAccessType = os.Getenv(envSanityAccess)
	if cfg.TestVolumeAccessType == "" {
		cfg.TestVolumeAccessType = "mount"
	}
	began := time.Now()
	sanity.Test(t, cfg)
	t.Logf("csi-sanity (%s) took %s", cfg.TestVolumeAccessType, time.Since(began).Round(time.Millisecond))
}

// TestSanityBlock runs csi-sanity with block volumes.
func TestSanityBlock(t *testing.T) {
	runSanityChild(t, envSanityAccess+"=block")
}

// ginkgoSummary is the line csi-sanity ends with.
var ginkgoSummary = regexp.MustCompile(`Ran \d+ of \d+ Specs.*|\d+ Passed \| \d+ Failed \| \d+ Pending \| \d+ Skipped`)

// runSanityChild runs TestSanity in a child process with env added and
// fails when it fails; the spec counts go to the test log.
func runSanityChild(t *testing.T, env ...string) {
	t.Helper()
	requireRoot(t)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSanity$", "-test.count=1", "-test.v", "-ginkgo.no-color")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	for _, m := range ginkgoSummary.FindAll(out, -1) {
		t.Logf("csi-sanity: %s", m)
	}
	if err != nil {
		t.Fatalf("csi-sanity in a child process: %v\n%s", err, out)
	}
	if len(ginkgoSummary.FindAll(out, -1)) == 0 {
		t.Fatalf("csi-sanity printed no summary:\n%s", out)
	}
}
