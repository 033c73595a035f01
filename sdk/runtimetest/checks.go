package runtimetest

import (
	"maps"
	"slices"

	"google.golang.org/grpc/codes"

	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk/internal/kitcheck"
)

// check is one rule of the contract. events, when set, says whether the
// rule is for plugins with (true) or without (false) "runtime.events".
type check struct {
	name   string
	events *bool
	run    func(k *kit)
}

// withEvents and withoutEvents select checks by the "runtime.events"
// capability.
var withEvents, withoutEvents = ptr(true), ptr(false)

func ptr(b bool) *bool { return &b }

var checks = []check{
	{name: "GetInfo describes a runtime plugin", run: checkGetInfo},
	{name: "Configure twice is accepted", run: checkConfigureTwice},
	{name: "Probe is ready", run: checkProbe},
	{name: "Version names the backend", run: checkVersion},
	{name: "Status reports RuntimeReady", run: checkStatus},
	{name: "missing arguments are INVALID_ARGUMENT", run: checkMissingArguments},
	{name: "RunSandbox keeps labels, annotations and metadata", run: checkSandboxKept},
	{name: "ListSandboxes filters by label, id and state", run: checkListSandboxes},
	{name: "StopSandbox twice succeeds and stops its containers", run: checkStopSandboxTwice},
	{name: "RemoveSandbox twice succeeds and removes its containers", run: checkRemoveSandboxTwice},
	{name: "unknown objects", run: checkUnknown},
	{name: "CreateContainer in an unknown sandbox is NOT_FOUND", run: checkCreateInUnknownSandbox},
	{name: "CreateContainer with an absent image is NOT_FOUND", run: checkCreateWithAbsentImage},
	{name: "container lifecycle", run: checkContainerLifecycle},
	{name: "a killed container reports its exit code", run: checkExitCodes},
	{name: "ExecSync runs commands in running containers only", run: checkExecSync},
	{name: "ListStats lists running containers under their sandboxes, or is UNIMPLEMENTED", run: checkListStats},
	{name: "UpdateContainerResources changes a running container's, or is UNIMPLEMENTED", run: checkUpdateContainerResources},
	{name: "UpdateSandboxResources needs a pod cgroup, or is UNIMPLEMENTED", run: checkUpdateSandboxResources},
	{name: "ListContainers filters by label, sandbox, id and state", run: checkListContainers},
	{name: "EnsureImage makes the image present", run: checkEnsureImage},
	{name: "an absent image", run: checkAbsentImage},
	{name: "Events streams changes", events: withEvents, run: checkEvents},
	{name: "Events is UNIMPLEMENTED without runtime.events", events: withoutEvents, run: checkEventsUnimplemented},
}

func checkGetInfo(k *kit) {
	kitcheck.CheckInfo(k.T, k.info, k.setup.Plugin.Name, pluginv1.Kind_KIND_RUNTIME)
}

func checkConfigureTwice(k *kit) { kitcheck.CheckConfigureTwice(k.T, k.ctx, k.id, k.setup.Config) }

func checkProbe(k *kit) { kitcheck.CheckProbe(k.T, k.ctx(), k.id) }

func checkVersion(k *kit) {
	resp, err := k.rt.Version(k.ctx(), &runtimev1.VersionRequest{})
	k.mustOK("Version", err)
	if resp.GetRuntimeName() == "" || resp.GetRuntimeVersion() == "" {
		k.Errorf("Version: got name %q version %q; want both set", resp.GetRuntimeName(), resp.GetRuntimeVersion())
	}
}

func checkStatus(k *kit) {
	resp, err := k.rt.Status(k.ctx(), &runtimev1.StatusRequest{})
	k.mustOK("Status", err)
	i := slices.IndexFunc(resp.GetConditions(), func(c *runtimev1.Condition) bool { return c.GetType() == "RuntimeReady" })
	if i < 0 || !resp.GetConditions()[i].GetStatus() {
		k.Errorf("Status: got conditions %v; want RuntimeReady true", resp.GetConditions())
	}
}

func checkSandboxKept(k *kit) {
	id, cfg := k.runSandbox("kept", map[string]string{"runtimetest.podhost.io/odd value": "with spaces, ünïcode and = signs"})
	resp, err := k.rt.SandboxStatus(k.ctx(), &runtimev1.SandboxStatusRequest{SandboxId: id})
	k.mustOK("SandboxStatus", err)
	sb := resp.GetSandbox()
	if sb.GetId() != id || sb.GetState() != runtimev1.SandboxState_SANDBOX_STATE_READY {
		k.Errorf("SandboxStatus: got id %q state %v; want %q %v", sb.GetId(), sb.GetState(), id, runtimev1.SandboxState_SANDBOX_STATE_READY)
	}
	if !maps.Equal(sb.GetLabels(), cfg.GetLabels()) {
		k.Errorf("sandbox labels: got %v; want %v unchanged", sb.GetLabels(), cfg.GetLabels())
	}
	if !maps.Equal(sb.GetAnnotations(), cfg.GetAnnotations()) {
		k.Errorf("sandbox annotations: got %v; want %v unchanged", sb.GetAnnotations(), cfg.GetAnnotations())
	}
	if got, want := sb.GetMetadata(), cfg.GetMetadata(); got.GetName() != want.GetName() || got.GetNamespace() != want.GetNamespace() || got.GetUid() != want.GetUid() || got.GetAttempt() != want.GetAttempt() {
		k.Errorf("sandbox metadata: got %v; want %v", got, want)
	}
	if sb.GetCreatedAt() <= 0 {
		k.Errorf("sandbox created_at: got %d; want a time", sb.GetCreatedAt())
	}
}

func checkListSandboxes(k *kit) {
	a, _ := k.runSandbox("a", map[string]string{"runtimetest.podhost.io/pod": "a"})
	b, _ := k.runSandbox("b", map[string]string{"runtimetest.podhost.io/pod": "b"})
	_, err := k.rt.StopSandbox(k.ctx(), &runtimev1.StopSandboxRequest{SandboxId: b})
	k.mustOK("StopSandbox", err)
	tests := []struct {
		name   string
		filter *runtimev1.SandboxFilter
		want   []string
	}{
		{"the check's label", &runtimev1.SandboxFilter{LabelSelector: k.labels}, []string{a, b}},
		{"two labels", &runtimev1.SandboxFilter{LabelSelector: k.withLabels(map[string]string{"runtimetest.podhost.io/pod": "a"})}, []string{a}},
		{"a label value nobody has", &runtimev1.SandboxFilter{LabelSelector: k.withLabels(map[string]string{"runtimetest.podhost.io/pod": "c"})}, nil},
		{"id", &runtimev1.SandboxFilter{Id: b, LabelSelector: k.labels}, []string{b}},
		{"ready", &runtimev1.SandboxFilter{State: runtimev1.SandboxState_SANDBOX_STATE_READY, LabelSelector: k.labels}, []string{a}},
		{"not ready", &runtimev1.SandboxFilter{State: runtimev1.SandboxState_SANDBOX_STATE_NOTREADY, LabelSelector: k.labels}, []string{b}},
	}
	for _, tt := range tests {
		if got := k.sandboxIDs(tt.filter); !sameSet(got, tt.want) {
			k.Errorf("ListSandboxes by %s: got %q; want %q", tt.name, got, tt.want)
		}
	}
}

func checkStopSandboxTwice(k *kit) {
	sb, sbCfg := k.runSandbox("stop", nil)
	c, _ := k.createContainer(sb, sbCfg, "app", k.ensureImage(), nil)
	_, err := k.rt.StartContainer(k.ctx(), &runtimev1.StartContainerRequest{ContainerId: c})
	k.mustOK("StartContainer", err)
	for range 2 {
		_, err := k.rt.StopSandbox(k.ctx(), &runtimev1.StopSandboxRequest{SandboxId: sb})
		k.wantCode("StopSandbox", err, codes.OK)
	}
	resp, err := k.rt.SandboxStatus(k.ctx(), &runtimev1.SandboxStatusRequest{SandboxId: sb})
	k.mustOK("SandboxStatus", err)
	if got := resp.GetSandbox().GetState(); got != runtimev1.SandboxState_SANDBOX_STATE_NOTREADY {
		k.Errorf("stopped sandbox state: got %v; want %v", got, runtimev1.SandboxState_SANDBOX_STATE_NOTREADY)
	}
	if got := k.containerState(c); got != runtimev1.ContainerState_CONTAINER_STATE_EXITED {
		k.Errorf("container of a stopped sandbox: got %v; want %v", got, runtimev1.ContainerState_CONTAINER_STATE_EXITED)
	}
}

func checkRemoveSandboxTwice(k *kit) {
	sb, sbCfg := k.runSandbox("remove", nil)
	c, _ := k.createContainer(sb, sbCfg, "app", k.ensureImage(), nil)
	for range 2 {
		_, err := k.rt.RemoveSandbox(k.ctx(), &runtimev1.RemoveSandboxRequest{SandboxId: sb})
		k.wantCode("RemoveSandbox", err, codes.OK)
	}
	_, err := k.rt.SandboxStatus(k.ctx(), &runtimev1.SandboxStatusRequest{SandboxId: sb})
	k.wantCode("SandboxStatus of a removed sandbox", err, codes.NotFound)
	_, err = k.rt.ContainerStatus(k.ctx(), &runtimev1.ContainerStatusRequest{ContainerId: c})
	k.wantCode("ContainerStatus of a container of a removed sandbox", err, codes.NotFound)
	if got := k.sandboxIDs(&runtimev1.SandboxFilter{LabelSelector: k.labels}); len(got) > 0 {
		k.Errorf("ListSandboxes after RemoveSandbox: got %q; want none", got)
	}
}

// unknownID is an ID no plugin hands out.
const unknownID = "runtimetest-unknown-0123456789abcdef"

func checkUnknown(k *kit) {
	tests := []struct {
		name string
		err  func() error
		want codes.Code
	}{
		{"StopSandbox", func() error {
			_, err := k.rt.StopSandbox(k.ctx(), &runtimev1.StopSandboxRequest{SandboxId: unknownID})
			return err
		}, codes.OK},
		{"RemoveSandbox", func() error {
			_, err := k.rt.RemoveSandbox(k.ctx(), &runtimev1.RemoveSandboxRequest{SandboxId: unknownID})
			return err
		}, codes.OK},
		{"SandboxStatus", func() error {
			_, err := k.rt.SandboxStatus(k.ctx(), &runtimev1.SandboxStatusRequest{SandboxId: unknownID})
			return err
		}, codes.NotFound},
		{"StartContainer", func() error {
			_, err := k.rt.StartContainer(k.ctx(), &runtimev1.StartContainerRequest{ContainerId: unknownID})
			return err
		}, codes.NotFound},
		{"StopContainer", func() error {
			_, err := k.rt.StopContainer(k.ctx(), &runtimev1.StopContainerRequest{ContainerId: unknownID})
			return err
		}, codes.OK},
		{"RemoveContainer", func() error {
			_, err := k.rt.RemoveContainer(k.ctx(), &runtimev1.RemoveContainerRequest{ContainerId: unknownID})
			return err
		}, codes.OK},
		{"ContainerStatus", func() error {
			_, err := k.rt.ContainerStatus(k.ctx(), &runtimev1.ContainerStatusRequest{ContainerId: unknownID})
			return err
		}, codes.NotFound},
	}
	for _, tt := range tests {
		k.wantCode(tt.name+" of an unknown id", tt.err(), tt.want)
	}
}

func checkCreateInUnknownSandbox(k *kit) {
	cfg := k.containerConfig("app", k.ensureImage(), nil)
	_, err := k.rt.CreateContainer(k.ctx(), &runtimev1.CreateContainerRequest{SandboxId: unknownID, Config: cfg, SandboxConfig: k.sandboxConfig("unknown", nil)})
	k.wantCode("CreateContainer in an unknown sandbox", err, codes.NotFound)
}

func checkCreateWithAbsentImage(k *kit) {
	sb, sbCfg := k.runSandbox("absent", nil)
	cfg := k.containerConfig("app", k.setup.AbsentImage, nil)
	_, err := k.rt.CreateContainer(k.ctx(), &runtimev1.CreateContainerRequest{SandboxId: sb, Config: cfg, SandboxConfig: sbCfg})
	k.wantCode("CreateContainer with absent image "+k.setup.AbsentImage, err, codes.NotFound)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
