// Package runtimetest is the conformance kit for podhost runtime plugins. A
// plugin author runs it from go test:
//
//	func TestConformance(t *testing.T) {
//		runtimetest.Run(t, func(t *testing.T) runtimetest.Setup {
//			return runtimetest.Setup{Plugin: newPlugin()}
//		})
//	}
//
// Run serves the plugin in process over real gRPC on a unix socket and checks
// it against the contract of proto/runtime/v1, one subtest per rule: the
// identity calls, Version and Status, sandboxes and containers listed by
// label with their labels unchanged, idempotent stop and remove, the exit
// code of a killed container (never 0, and never a listed exit code
// without its finish time), NOT_FOUND for unknown objects, images, the
// ExecSync in each container state, in-place resource updates
// (UNIMPLEMENTED allowed), the Events stream (UNIMPLEMENTED unless the
// plugin lists "runtime.events"), INVALID_ARGUMENT for missing arguments,
// and that every error code is one the contract allows. Each subtest gets
// a fresh plugin from the factory; against a shared backend, every object a
// check creates carries a label unique to the check and is removed after it.
//
// The kit imports the sdk and the generated protos; plugins import it only
// from their tests.
package runtimetest

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/internal/inprocess"
	"github.com/podhost/podhost/sdk/internal/kitcheck"
)

// Setup is one plugin under test and how to exercise it. Only Plugin is
// required; the other fields let a real backend be plugged in.
type Setup struct {
	// Plugin is served as the plugin's main would serve it; Kind must be
	// pluginapi.KindRuntime.
	Plugin sdk.Plugin
	// Config is the JSON config passed to Configure before any check; empty
	// means "{}". It must be accepted.
	Config string
	// Image is an image the backend can pull and run, kept running until
	// stopped; empty means DefaultImage.
	Image string
	// AbsentImage is an image that is not present and cannot be pulled;
	// empty means DefaultAbsentImage.
	AbsentImage string
	// Sandbox adjusts each sandbox config before RunSandbox, e.g. to set a
	// log directory or the host network. Nil leaves it as the kit made it.
	Sandbox func(*runtimev1.SandboxConfig)
	// Container adjusts each container config before CreateContainer, e.g.
	// to set a command. Nil leaves it as the kit made it.
	Container func(*runtimev1.ContainerConfig)
	// ExecSucceeds and ExecFails, when set, are commands that exit 0 and
	// non-zero in a running container of Image; the ExecSync check runs
	// them. Nil skips that part (the default image has no commands).
	ExecSucceeds, ExecFails []string
	// CallTimeout bounds each call and each wait for an event; zero means
	// 30 seconds. Pulls happen within it.
	CallTimeout time.Duration
}

// Defaults of Setup.
const (
	DefaultImage       = "registry.k8s.io/pause:3.10"
	DefaultAbsentImage = "registry.podhost.invalid/runtimetest/absent:never"
)

// The label every object a check creates carries, with a value unique to
// the check.
const checkLabel = "runtimetest.podhost.io/check"

// allowed reports whether the runtime contract allows code from method.
// UNIMPLEMENTED is allowed only from Events, whose check decides whether
// the plugin may answer it, and from the optional ListStats,
// UpdateContainerResources and UpdateSandboxResources.
func allowed(method string, code codes.Code) bool {
	if code == codes.Unimplemented {
		return slices.Contains(optionalMethods, method)
	}
	return slices.Contains(allowedCodes, code)
}

var optionalMethods = []string{
	runtimev1.Runtime_Events_FullMethodName, runtimev1.Runtime_ListStats_FullMethodName,
	runtimev1.Runtime_UpdateContainerResources_FullMethodName, runtimev1.Runtime_UpdateSandboxResources_FullMethodName,
}

var allowedCodes = []codes.Code{
	codes.NotFound, codes.InvalidArgument, codes.FailedPrecondition,
	codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Unknown,
}

// Run checks the plugins newPlugin returns against the runtime contract.
// newPlugin is called once to read the capabilities, then once per subtest.
func Run(t *testing.T, newPlugin func(t *testing.T) Setup) {
	t.Helper()
	events := slices.Contains(start(t, newPlugin).info.GetCapabilities(), pluginapi.CapRuntimeEvents)
	for _, c := range checks {
		if c.events != nil && *c.events != events {
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
	rt    runtimev1.RuntimeClient
	info  *pluginv1.GetInfoResponse
	// labels are carried by everything the check creates.
	labels map[string]string
}

var checkSeq atomic.Int64

func start(t *testing.T, newPlugin func(t *testing.T) Setup) *kit {
	t.Helper()
	s := newPlugin(t)
	if s.Plugin.Kind != pluginapi.KindRuntime {
		t.Fatalf("plugin %q has kind %q; want %q", s.Plugin.Name, s.Plugin.Kind, pluginapi.KindRuntime)
	}
	if s.Config == "" {
		s.Config = "{}"
	}
	if s.Image == "" {
		s.Image = DefaultImage
	}
	if s.AbsentImage == "" {
		s.AbsentImage = DefaultAbsentImage
	}
	if s.CallTimeout == 0 {
		s.CallTimeout = 30 * time.Second
	}
	conn := inprocess.Dial(t, s.Plugin, allowed)
	k := &kit{
		T: t, setup: s,
		id: pluginv1.NewIdentityClient(conn), rt: runtimev1.NewRuntimeClient(conn),
		labels: map[string]string{checkLabel: fmt.Sprintf("check-%d-%d", time.Now().UnixNano(), checkSeq.Add(1))},
	}
	kitcheck.Configure(t, k.ctx(), k.id, s.Config, "runtimetest")
	var err error
	if k.info, err = k.id.GetInfo(k.ctx(), &pluginv1.GetInfoRequest{}); err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	return k
}

// ctx is a context for one call, bounded by the call timeout and the test.
func (k *kit) ctx() context.Context { return kitcheck.CallContext(k.T, k.setup.CallTimeout) }
