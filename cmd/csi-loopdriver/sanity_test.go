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

// csi-sanity (Ginkgo) runs its specs once per process, and not at all
// under go test -count=N, so every run re-executes this test binary as a
// child that runs TestSanity with these set. A run is 38 specs of 103
// (the rest need snapshots, expansion, listing or controller publish,
// which the driver does not offer) and takes about a second with 64 MiB
// volumes; TestBinary's first go build is the slow part of the package.
const (
	// envSanityRun set to 1 makes TestSanity run the specs itself.
	envSanityRun = "CSI_LOOPDRIVER_SANITY_RUN"
	// envSanityAccess set to "block" runs the block-mode specs.
	envSanityAccess = "CSI_LOOPDRIVER_SANITY_ACCESS"
	// envSanityEndpoint names the socket of a driver already running.
	envSanityEndpoint = "CSI_LOOPDRIVER_SANITY_ENDPOINT"
)

// TestSanity runs csi-sanity against the driver served in the same
// process (or the one envSanityEndpoint names), with real staging and
// target dirs, loop devices and mounts.
func TestSanity(t *testing.T) {
	requireRoot(t)
	if os.Getenv(envSanityRun) != "1" {
		runSanityChild(t)
		return
	}
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

// ginkgoSummary is the lines csi-sanity ends with, and the child's time.
var ginkgoSummary = regexp.MustCompile(`Ran \d+ of \d+ Specs.*|\d+ Passed \| \d+ Failed \| \d+ Pending \| \d+ Skipped|csi-sanity \(\w+\) took .*`)

// runSanityChild runs TestSanity in a child process with env added and
// fails when it fails; the spec counts go to the test log.
func runSanityChild(t *testing.T, env ...string) {
	t.Helper()
	requireRoot(t)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSanity$", "-test.count=1", "-test.v", "-ginkgo.no-color")
	cmd.Env = append(append(os.Environ(), envSanityRun+"=1"), env...)
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
