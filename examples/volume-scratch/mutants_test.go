package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/internal/testutil"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/mount"
	"github.com/podhost/podhost/sdk/volumetest"
)

// The conformance kit must catch a plugin that breaks the contract. Each
// mutant is volume-scratch with one bug; TestKitCatchesMutants runs the kit
// against it in a child process (this test binary, re-executed) and expects
// the named subtest to fail. Most bugs are planted in the plain Go calls
// (sdk.Volumes); those the SDK makes impossible there are planted in the
// gRPC service the SDK builds, served the old way (sdk.Plugin.Volume).

// mutantEnv names the mutant TestMutantConformance serves.
const mutantEnv = "VOLUME_SCRATCH_MUTANT"

// rootEnv, when set, is the root of the volumes TestMutantConformance
// serves, for a parent test to look into after the child ended.
const rootEnv = "VOLUME_SCRATCH_ROOT"

// mutant is volume-scratch with some calls replaced.
type mutant struct {
	*scratch
	stage     func(context.Context, sdk.StageRequest) error
	unstage   func(context.Context, sdk.UnstageRequest) error
	publish   func(context.Context, sdk.PublishRequest) error
	unpublish func(context.Context, sdk.UnpublishRequest) error
	metrics   func(context.Context, sdk.MetricsRequest) (sdk.VolumeUsage, error)
	// plugin, when set, changes the plugin served (an SDK option, or the
	// gRPC service itself).
	plugin func(t *testing.T, p sdk.Plugin) sdk.Plugin
}

func (m *mutant) Stage(ctx context.Context, r sdk.StageRequest) error {
	if m.stage != nil {
		return m.stage(ctx, r)
	}
	return m.scratch.Stage(ctx, r)
}

func (m *mutant) Unstage(ctx context.Context, r sdk.UnstageRequest) error {
	if m.unstage != nil {
		return m.unstage(ctx, r)
	}
	return m.scratch.Unstage(ctx, r)
}

func (m *mutant) Publish(ctx context.Context, r sdk.PublishRequest) error {
	if m.publish != nil {
		return m.publish(ctx, r)
	}
	return m.scratch.Publish(ctx, r)
}

func (m *mutant) Unpublish(ctx context.Context, r sdk.UnpublishRequest) error {
	if m.unpublish != nil {
		return m.unpublish(ctx, r)
	}
	return m.scratch.Unpublish(ctx, r)
}

func (m *mutant) Metrics(ctx context.Context, r sdk.MetricsRequest) (sdk.VolumeUsage, error) {
	if m.metrics != nil {
		return m.metrics(ctx, r)
	}
	return m.scratch.Metrics(ctx, r)
}

// grpcMutant is the gRPC service the SDK builds for volume-scratch, with
// some calls replaced, served as a plugin that speaks the contract itself.
type grpcMutant struct {
	volumev1.VolumeServer
	caps      *volumev1.GetCapabilitiesResponse
	unpublish func(context.Context, *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error)
}

func (m *grpcMutant) GetCapabilities(ctx context.Context, req *volumev1.GetCapabilitiesRequest) (*volumev1.GetCapabilitiesResponse, error) {
	if m.caps != nil {
		return m.caps, nil
	}
	return m.VolumeServer.GetCapabilities(ctx, req)
}

func (m *grpcMutant) Unpublish(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
	if m.unpublish != nil {
		return m.unpublish(ctx, req)
	}
	return m.VolumeServer.Unpublish(ctx, req)
}

// servedOldWay serves p's Volumes as a gRPC service of its own, changed by
// mutate, as a plugin written against proto/volume/v1 would be.
func servedOldWay(t *testing.T, p sdk.Plugin, mutate func(*grpcMutant)) sdk.Plugin {
	srv, caps, err := p.VolumeServer()
	if err != nil {
		t.Fatal(err)
	}
	m := &grpcMutant{VolumeServer: srv}
	mutate(m)
	p.Volumes, p.Volume, p.Capabilities = nil, m, caps
	if m.caps != nil && !m.caps.GetSupportsMetrics() {
		p.Capabilities = nil
	}
	return p
}

// mutants maps a bug to the mutant and the kit subtest that must catch it.
var mutants = map[string]testutil.Mutant[*mutant]{
	"second stage refused": {Mutate: func(m *mutant) {
		m.stage = func(ctx context.Context, r sdk.StageRequest) error {
			if m.staged(r.VolumeID, r.StagingPath) {
				return fmt.Errorf("already staged: %w", sdk.ErrAlreadyExists)
			}
			return m.scratch.Stage(ctx, r)
		}
	}, CaughtBy: "Stage_twice_succeeds"},
	"unstage of nothing is NOT_FOUND": {Mutate: func(m *mutant) {
		m.unstage = func(ctx context.Context, r sdk.UnstageRequest) error {
			if mounted, _ := mount.IsMounted(r.StagingPath); !mounted {
				return fmt.Errorf("not staged: %w", sdk.ErrNotFound)
			}
			return m.scratch.Unstage(ctx, r)
		}
	}, CaughtBy: "Unstage_of_a_never-staged_volume_succeeds"},
	"publish without stage": {Mutate: func(m *mutant) {
		m.publish = func(_ context.Context, r sdk.PublishRequest) error {
			return os.MkdirAll(r.TargetPath, 0o750)
		}
	}, CaughtBy: "Publish_before_Stage_is_FAILED_PRECONDITION"},
	"unpublish keeps the target": {Mutate: func(m *mutant) {
		m.unpublish = func(context.Context, sdk.UnpublishRequest) error { return nil }
	}, CaughtBy: "round_trip"},
	"publish makes an empty directory": {Mutate: func(m *mutant) {
		m.publish = func(ctx context.Context, r sdk.PublishRequest) error {
			if !m.staged(r.VolumeID, r.StagingPath) {
				return m.scratch.Publish(ctx, r)
			}
			return os.MkdirAll(r.TargetPath, 0o750)
		}
		m.unpublish = func(_ context.Context, r sdk.UnpublishRequest) error {
			return os.RemoveAll(r.TargetPath)
		}
	}, CaughtBy: "data_written_through_a_target_is_in_the_volume"},
	"publish ignores readonly": {Mutate: func(m *mutant) {
		m.publish = func(ctx context.Context, r sdk.PublishRequest) error {
			r.Readonly = false
			return m.scratch.Publish(ctx, r)
		}
	}, CaughtBy: "a_read-only_target_refuses_writes"},
	"unstage trusts its record of stages": {Mutate: func(m *mutant) {
		done := newRecord()
		m.stage = func(ctx context.Context, r sdk.StageRequest) error {
			return done.add(r.StagingPath, m.scratch.Stage(ctx, r))
		}
		m.unstage = func(ctx context.Context, r sdk.UnstageRequest) error {
			if !done.has(r.StagingPath) {
				return nil
			}
			return m.scratch.Unstage(ctx, r)
		}
	}, CaughtBy: "an_interrupted_Stage_is_undone_by_Unstage"},
	"unpublish trusts its record of publishes": {Mutate: func(m *mutant) {
		done := newRecord()
		m.publish = func(ctx context.Context, r sdk.PublishRequest) error {
			return done.add(r.TargetPath, m.scratch.Publish(ctx, r))
		}
		m.unpublish = func(ctx context.Context, r sdk.UnpublishRequest) error {
			if !done.has(r.TargetPath) {
				return nil
			}
			return m.scratch.Unpublish(ctx, r)
		}
	}, CaughtBy: "an_interrupted_Publish_is_undone_by_Unpublish"},
	"unpublish fails": {Mutate: func(m *mutant) {
		m.unpublish = func(context.Context, sdk.UnpublishRequest) error {
			return fmt.Errorf("unpublish fails: %w", sdk.ErrUncertain)
		}
	}, CaughtBy: "round_trip"},
	"code outside the contract": {Mutate: func(m *mutant) {
		m.metrics = func(context.Context, sdk.MetricsRequest) (sdk.VolumeUsage, error) {
			return sdk.VolumeUsage{}, status.Error(codes.OutOfRange, "no such volume")
		}
	}, CaughtBy: "GetMetrics_of_an_unknown_path_is_NOT_FOUND"},
	"used more than total": {Mutate: func(m *mutant) {
		m.metrics = func(context.Context, sdk.MetricsRequest) (sdk.VolumeUsage, error) {
			return sdk.VolumeUsage{TotalBytes: 10, UsedBytes: 8, AvailableBytes: 8}, nil
		}
	}, CaughtBy: "GetMetrics_reports_sane_usage"},
	"interrupted stage answers final": {Mutate: func(m *mutant) {
		m.stage = finalWhenCut(m.scratch.Stage, sdk.ErrNotStaged)
	}, CaughtBy: "an_interrupted_Stage_is_undone_by_Unstage"},
	"interrupted publish answers final": {Mutate: func(m *mutant) {
		m.publish = finalWhenCut(m.scratch.Publish, sdk.ErrAlreadyExists)
	}, CaughtBy: "an_interrupted_Publish_is_undone_by_Unpublish"},
	"unstage removes the staging directory": {Mutate: func(m *mutant) {
		m.unstage = func(ctx context.Context, r sdk.UnstageRequest) error {
			if err := m.scratch.Unstage(ctx, r); err != nil {
				return err
			}
			return mount.UnmountAndRemove(r.StagingPath)
		}
	}, CaughtBy: "Unstage_keeps_the_staging_directory"},
	"volume id used as a path": {Mutate: func(m *mutant) {
		m.plugin = func(_ *testing.T, p sdk.Plugin) sdk.Plugin {
			p.OpaqueVolumeIDs = true // and scratch joins the ID to its root
			return p
		}
	}, CaughtBy: "a_volume_ID_is_never_used_as_a_path"},
	"empty volume id accepted": {Mutate: func(m *mutant) {
		m.plugin = func(t *testing.T, p sdk.Plugin) sdk.Plugin {
			return servedOldWay(t, p, func(g *grpcMutant) {
				g.unpublish = func(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
					req.VolumeId = "anything"
					return g.VolumeServer.Unpublish(ctx, req)
				}
			})
		}
	}, CaughtBy: "missing_arguments_are_INVALID_ARGUMENT"},
	"metrics served without the capability": {Mutate: func(m *mutant) {
		m.plugin = func(t *testing.T, p sdk.Plugin) sdk.Plugin {
			return servedOldWay(t, p, func(g *grpcMutant) {
				g.caps = &volumev1.GetCapabilitiesResponse{StageUnstage: true}
			})
		}
	}, CaughtBy: "GetMetrics_is_UNIMPLEMENTED_without_supports_metrics"},
}

// finalWhenCut returns call, changed to answer final, an error wrapping
// sentinel, when it failed because its context ended.
func finalWhenCut[R any](call func(context.Context, R) error, sentinel error) func(context.Context, R) error {
	return func(ctx context.Context, r R) error {
		err := call(ctx, r)
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("cut short: %w", sentinel)
		}
		return err
	}
}

// rules are what the kit must say when it catches the three mutants whose
// faults it once missed: the rule, not only the call.
var rules = map[string]string{
	"interrupted stage answers final":       "a final error: an interrupted call may have taken effect in part",
	"interrupted publish answers final":     "a final error: an interrupted call may have taken effect in part",
	"unstage removes the staging directory": "Unstage must not remove the staging directory, which the host created and removes",
	"volume id used as a path":              "the plugin used the ID as a path; volume IDs are untrusted input",
}

// staged reports whether volume id is staged at stagingPath.
func (m *mutant) staged(id, stagingPath string) bool {
	_, ours, err := mount.MountedFrom(stagingPath, m.dir(id))
	return err == nil && ours
}

// record is the paths a mutant's calls succeeded on.
type record struct {
	mu    *sync.Mutex
	paths map[string]bool
}

func newRecord() record { return record{mu: &sync.Mutex{}, paths: map[string]bool{}} }

// add records path when err, the answer of the call on it, is nil, and
// returns err.
func (r record) add(path string, err error) error {
	if err == nil {
		r.mu.Lock()
		r.paths[path] = true
		r.mu.Unlock()
	}
	return err
}

func (r record) has(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paths[path]
}

func TestMutantConformance(t *testing.T) {
	mu := testutil.ServedMutant(t, mutantEnv, mutants)
	volumetest.Run(t, func(t *testing.T) volumetest.Setup {
		s := setup(t)
		m := &mutant{scratch: s.Plugin.Volumes.(*scratch)}
		if mu.Mutate != nil {
			mu.Mutate(m)
		}
		s.Plugin.Volumes = m
		if m.plugin != nil {
			s.Plugin = m.plugin(t, s.Plugin)
		}
		if root := os.Getenv(rootEnv); root != "" {
			s.Config = fmt.Sprintf(`{"root": %q}`, root)
		}
		return s
	})
}

func TestKitCatchesMutants(t *testing.T) {
	testutil.KitCatchesMutants(t, mutantEnv, "TestMutantConformance", mutants)
}

// TestKitNamesTheRule runs the kit's catching subtest against each mutant
// of rules and checks that the failure names the rule broken.
func TestKitNamesTheRule(t *testing.T) {
	for name, rule := range rules {
		t.Run(name, func(t *testing.T) {
			run := "-test.run=^TestMutantConformance$/^" + mutants[name].CaughtBy + "$"
			cmd := exec.CommandContext(t.Context(), os.Args[0], run, "-test.v")
			cmd.Env = append(os.Environ(), mutantEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the kit passed mutant %q; want it to fail\n%s", name, out)
			}
			if !strings.Contains(string(out), rule) {
				t.Errorf("the kit's output lacks the rule %q\n%s", rule, out)
			}
		})
	}
}

// TestKitUnmountsBeforeCleanup runs the kit's round trip against a plugin
// whose Unpublish fails, which leaves the target and staging paths
// mounted, and checks that the kit unmounted them before it removed its
// directory: what the round trip wrote is still in the volume.
func TestKitUnmountsBeforeCleanup(t *testing.T) {
	root := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMutantConformance$/^round_trip$", "-test.v")
	cmd.Env = append(os.Environ(), mutantEnv+"=unpublish fails", rootEnv+"="+root)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the kit passed a plugin whose Unpublish fails; want it to fail\n%s", out)
	}
	if bytes.Contains(out, []byte("RemoveAll cleanup")) {
		t.Errorf("the kit's cleanup could not remove its directory\n%s", out)
	}
	written, err := filepath.Glob(filepath.Join(root, "*", "volumetest"))
	if err != nil || len(written) != 1 {
		t.Errorf("files the round trip wrote into the volume: got %v, %v; want one, kept by the kit's cleanup\n%s", written, err, out)
	}
}

// TestKitSaysNeedsRoot runs the kit's round trip as an unprivileged user
// (this test binary, copied where that user may run it) and checks that
// the failure says the plugin needs root, not only what mount(8) said.
func TestKitSaysNeedsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test runs the kit as another user: it needs root")
	}
	dir, err := os.MkdirTemp("", "volume-scratch-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	bin := filepath.Join(dir, "volume-scratch.test")
	b, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(bin, b, 0o755)
	}
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "-test.run=^TestConformance$/^round_trip$", "-test.v")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the kit passed as uid 65534; want it to fail\n%s", out)
	}
	for _, want := range []string{"(needs root; running as uid 65534)", "the kit runs as uid 65534: a plugin that mounts needs root"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the kit's output lacks %q\n%s", want, out)
		}
	}
}
