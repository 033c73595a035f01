// Package volumetest is the conformance kit for podhost volume plugins. A
// plugin author runs it from go test:
//
//	func TestConformance(t *testing.T) {
//		volumetest.Run(t, func(t *testing.T) volumetest.Setup {
//			return volumetest.Setup{Plugin: newPlugin("test")} // Kind: sdk.KindVolume
//		})
//	}
//
// Run serves the plugin in process over real gRPC on a unix socket and checks
// it against the contract of proto/volume/v1, one subtest per rule: the
// identity calls, idempotent set-up and teardown, FAILED_PRECONDITION for a
// publish before stage, INVALID_ARGUMENT for missing arguments, metrics, and
// that every error code is one of the contract's final or uncertain classes.
// It writes through a target path and reads the data back through the next
// one (the volume must be mounted there, not an empty directory), checks
// that a read-only target refuses writes, and that Unstage leaves the
// staging directory, which the host created and removes. It interrupts
// Stage and Publish midway (at sdk.Midway, or at the hook Setup.Midway
// points at) and after they answered: an interrupted call must answer an
// uncertain error, never a final one, and Unpublish and Unstage must then
// leave nothing mounted. It sends a volume ID that climbs out of any
// directory ("../../…") to a place the kit watches, and fails a plugin that
// creates or removes anything there: volume IDs are untrusted input, never
// a path.
//
// Before a check's directories are removed, the kit unmounts whatever is
// still mounted under them, so that a failed check cannot delete through a
// live mount into a volume. A plugin that mounts needs root to pass; run as
// another user, the kit's failures say "needs root".
// GetCapabilities decides which rules apply. Each subtest gets a fresh plugin
// from the factory, so checks do not depend on one another. The kit checks
// the Volume service as the host calls it, whether the plugin serves it
// itself (sdk.Plugin.Volume) or the SDK serves it (sdk.Plugin.Volumes).
//
// The kit imports the sdk and the generated protos; plugins import it only
// from their tests.
package volumetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/internal/inprocess"
	"github.com/podhost/podhost/sdk/internal/kitcheck"
)

// Setup is one plugin under test and how to exercise it. Only Plugin is
// required; the other fields let a real backend be plugged in.
type Setup struct {
	// Plugin is served as the plugin's main would serve it; Kind must be
	// sdk.KindVolume.
	Plugin sdk.Plugin
	// Config is the JSON config passed to Configure before any check; empty
	// means "{}". It must be accepted.
	Config string
	// NewVolume returns a volume a check may attach, stage, publish and tear
	// down. Two calls within one check must return different volumes. Nil
	// gives volumes with generated IDs and no context, which suits plugins
	// that create what they are asked for.
	NewVolume func(t *testing.T) Volume
	// Dir is where the kit creates staging and target paths; empty means
	// t.TempDir(). A plugin that mounts needs a directory it may mount on.
	Dir string
	// CallTimeout bounds each call; zero means 30 seconds.
	CallTimeout time.Duration
	// Midway, when set, points at a hook of a plugin that serves the
	// Volume service itself (sdk.Plugin.Volume): a func field the plugin
	// calls in the middle of Stage and of Publish, after it changed the
	// node (mounted something), and after which it returns an uncertain
	// error when its ctx has ended. In production the hook is nil or a
	// no-op. Before any call the kit sets it to a function that, when the
	// kit interrupts the call, ends the caller's context and waits until
	// the plugin's ctx is done; otherwise it returns at once. A plugin on
	// sdk.Plugin.Volumes calls sdk.Midway instead and needs no Midway here.
	// With neither, the kit interrupts Stage and Publish only after they
	// answered (as when the answer is lost), not midway.
	Midway *func(ctx context.Context)
}

// Volume is one volume to exercise, as the host would describe it.
type Volume struct {
	ID      string
	Context map[string]string
	Secrets map[string]string
	// Capability is how the volume is used; nil means a filesystem with the
	// plugin's default type, single-node writer.
	Capability *volumev1.Capability
}

// allowed reports whether the contract allows code: the final and the
// uncertain classes.
func allowed(_ string, code codes.Code) bool { return slices.Contains(allowedCodes, code) }

var allowedCodes = []codes.Code{
	codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition,
	codes.AlreadyExists, codes.ResourceExhausted, codes.PermissionDenied,
	codes.Unimplemented,
	codes.DeadlineExceeded, codes.Canceled, codes.Unavailable,
	codes.Aborted, codes.Internal, codes.Unknown,
}

// Run checks the plugins newPlugin returns against the volume contract.
// newPlugin is called once to read the capabilities, then once per subtest.
func Run(t *testing.T, newPlugin func(t *testing.T) Setup) {
	t.Helper()
	caps := start(t, newPlugin).caps
	for _, c := range checks {
		if c.applies != nil && !c.applies(caps) {
			continue
		}
		t.Run(c.name, func(t *testing.T) { c.run(start(t, newPlugin)) })
	}
}

// kit is one plugin served for one check.
type kit struct {
	*testing.T
	setup Setup
	id    pluginv1.IdentityClient
	vol   volumev1.VolumeClient
	caps  *volumev1.GetCapabilitiesResponse
	dir   string
	irq   *interrupter
}

var volumeSeq atomic.Int64

func start(t *testing.T, newPlugin func(t *testing.T) Setup) *kit {
	t.Helper()
	s := newPlugin(t)
	if s.Plugin.Kind != sdk.KindVolume {
		t.Fatalf("plugin %q has kind %q; want %q (sdk.KindVolume)", s.Plugin.Name, s.Plugin.Kind, sdk.KindVolume)
	}
	if s.Config == "" {
		s.Config = "{}"
	}
	if s.NewVolume == nil {
		s.NewVolume = func(*testing.T) Volume {
			return Volume{ID: fmt.Sprintf("volumetest-%d", volumeSeq.Add(1))}
		}
	}
	if s.CallTimeout == 0 {
		s.CallTimeout = 30 * time.Second
	}
	dir := s.Dir
	if dir == "" {
		dir = t.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "volumetest-"); err != nil {
			t.Fatalf("creating a directory under %s: %v", s.Dir, err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
	}
	// Registered after the directory's removal, so it runs before it.
	t.Cleanup(func() { unmountUnder(t, dir) })
	irq := &interrupter{timeout: s.CallTimeout}
	if s.Midway != nil {
		*s.Midway = midwayHook
	}
	conn := inprocess.Dial(t, s.Plugin, allowed, grpc.ChainUnaryInterceptor(irq.intercept))
	k := &kit{T: t, setup: s, id: pluginv1.NewIdentityClient(conn), vol: volumev1.NewVolumeClient(conn), dir: dir, irq: irq}

	ctx := k.ctx()
	kitcheck.Configure(t, ctx, k.id, s.Config, "volumetest")
	var err error
	if k.caps, err = k.vol.GetCapabilities(ctx, &volumev1.GetCapabilitiesRequest{}); err != nil {
		t.Fatalf("GetCapabilities: %v", err)
	}
	return k
}

// ctx is a context for one call, bounded by the call timeout and the test.
func (k *kit) ctx() context.Context { return kitcheck.CallContext(k.T, k.setup.CallTimeout) }

// stagingPath returns a fresh staging directory, created as the host does.
func (k *kit) stagingPath() string {
	p, err := os.MkdirTemp(k.dir, "staging-")
	if err != nil {
		k.Fatalf("creating staging path: %v", err)
	}
	return p
}

// targetPath returns a fresh target path whose parent exists and which does
// not exist itself, as the host passes it to Publish.
func (k *kit) targetPath() string {
	parent, err := os.MkdirTemp(k.dir, "pod-")
	if err != nil {
		k.Fatalf("creating target parent: %v", err)
	}
	return filepath.Join(parent, "volume")
}
