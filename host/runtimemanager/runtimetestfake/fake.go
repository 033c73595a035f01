package runtimetestfake

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Call is one recorded call: the method's short name ("RunSandbox") and a
// copy of the request.
type Call struct {
	Method string
	Req    proto.Message
}

// Fake is the in-memory runtime. The zero value is not usable; call New.
type Fake struct {
	runtimev1.UnimplementedRuntimeServer

	// Before, when set, runs before each call; an error fails the call
	// without effect.
	Before func(ctx context.Context, method string, req proto.Message) error
	// After, when set, runs after each call with its outcome and may
	// replace the error (for example with DEADLINE_EXCEEDED after a
	// sandbox was created).
	After func(ctx context.Context, method string, req proto.Message, err error) error
	// ExecSyncFunc, when set, answers ExecSync in a running container; nil runs
	// "true" (exit 0), "false" (exit 1) and nothing else (exit 127).
	ExecSyncFunc func(ctx context.Context, containerID string, cmd []string) (*runtimev1.ExecSyncResponse, error)
	// RequiredPodCgroupsOnly, when set, runs a sandbox whose pod cgroup is
	// not required without one, as runtime-containerd under the systemd
	// cgroup driver.
	RequiredPodCgroupsOnly bool

	now func() time.Time

	mu           sync.Mutex
	seq          int
	sandboxes    map[string]*runtimev1.Sandbox
	sandboxLogs  map[string]string
	podCgroups   map[string]bool // sandboxes run with a pod cgroup
	containers   map[string]*runtimev1.Container
	images       map[string]string // name → ref
	calls        []Call
	networkReady bool
}

// New returns an empty runtime whose clock is now (time.Now when nil).
func New(now func() time.Time) *Fake {
	if now == nil {
		now = time.Now
	}
	return &Fake{
		now: now, networkReady: true,
		sandboxes: map[string]*runtimev1.Sandbox{}, sandboxLogs: map[string]string{}, podCgroups: map[string]bool{},
		containers: map[string]*runtimev1.Container{}, images: map[string]string{},
	}
}

// Calls returns the recorded calls, in order.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// CallCount counts the recorded calls of a method.
func (f *Fake) CallCount(method string) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Method == method {
			n++
		}
	}
	return n
}

// SetNetworkReady sets the NetworkReady condition.
func (f *Fake) SetNetworkReady(ready bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.networkReady = ready
}

// Sandboxes returns copies of every sandbox, oldest first.
func (f *Fake) Sandboxes() []*runtimev1.Sandbox {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listSandboxes(nil)
}

// Containers returns copies of every container, oldest first.
func (f *Fake) Containers() []*runtimev1.Container {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listContainers(nil)
}

// ExitContainer makes a running or created container exit with code.
func (f *Fake) ExitContainer(id string, code int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.containers[id]; ok {
		f.exit(c, code, "")
	}
}

// CutStart does to a created container what containerd does when the
// client of an in-flight StartContainer goes away (a runtime plugin
// killed mid-call): the container exits 128 with reason StartError and no
// start time.
func (f *Fake) CutStart(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.containers[id]; ok && c.GetState() == runtimev1.ContainerState_CONTAINER_STATE_CREATED {
		c.State, c.ExitCode, c.Reason = runtimev1.ContainerState_CONTAINER_STATE_EXITED, 128, "StartError"
		c.Message, c.FinishedAt = "context canceled", f.stamp()
	}
}

// KillSandbox makes a sandbox die: its containers exit 137 and it is no
// longer ready.
func (f *Fake) KillSandbox(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopSandbox(id)
}

// LoseSandbox makes a sandbox no longer ready while its containers keep
// running, as when only its pause process died.
func (f *Fake) LoseSandbox(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb, ok := f.sandboxes[id]; ok {
		sb.State = runtimev1.SandboxState_SANDBOX_STATE_NOTREADY
	}
}

// record notes a call and runs Before.
func (f *Fake) begin(ctx context.Context, method string, req proto.Message) error {
	f.mu.Lock()
	f.calls = append(f.calls, Call{Method: method, Req: proto.Clone(req)})
	before := f.Before
	f.mu.Unlock()
	if before != nil {
		return before(ctx, method, req)
	}
	return nil
}

func (f *Fake) end(ctx context.Context, method string, req proto.Message, err error) error {
	if f.After != nil {
		return f.After(ctx, method, req, err)
	}
	return err
}

// do runs one call: begin, op under the lock, end.
func do[Req proto.Message, Resp any](f *Fake, ctx context.Context, method string, req Req, op func() (Resp, error)) (Resp, error) {
	var zero Resp
	if err := f.begin(ctx, method, req); err != nil {
		return zero, err
	}
	f.mu.Lock()
	resp, err := op()
	f.mu.Unlock()
	if err = f.end(ctx, method, req, err); err != nil {
		return zero, err
	}
	return resp, nil
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

func notFound(format string, args ...any) error {
	return status.Errorf(codes.NotFound, format, args...)
}

// newID returns a fresh id; mu is held.
func (f *Fake) newID(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s-%d", prefix, f.seq)
}

// stamp returns now in Unix nanoseconds; mu is held.
func (f *Fake) stamp() int64 { return f.now().UnixNano() }

func (f *Fake) listSandboxes(flt *runtimev1.SandboxFilter) []*runtimev1.Sandbox {
	var out []*runtimev1.Sandbox
	for _, sb := range f.sandboxes {
		if flt.GetId() != "" && flt.GetId() != sb.GetId() ||
			flt.GetState() != 0 && flt.GetState() != sb.GetState() ||
			!hasLabels(sb.GetLabels(), flt.GetLabelSelector()) {
			continue
		}
		out = append(out, proto.Clone(sb).(*runtimev1.Sandbox))
	}
	slices.SortFunc(out, func(a, b *runtimev1.Sandbox) int {
		return cmp.Or(cmp.Compare(a.GetCreatedAt(), b.GetCreatedAt()), cmp.Compare(idSeq(a.GetId()), idSeq(b.GetId())))
	})
	return out
}

func (f *Fake) listContainers(flt *runtimev1.ContainerFilter) []*runtimev1.Container {
	var out []*runtimev1.Container
	for _, c := range f.containers {
		if flt.GetId() != "" && flt.GetId() != c.GetId() ||
			flt.GetSandboxId() != "" && flt.GetSandboxId() != c.GetSandboxId() ||
			flt.GetState() != 0 && flt.GetState() != c.GetState() ||
			!hasLabels(c.GetLabels(), flt.GetLabelSelector()) {
			continue
		}
		out = append(out, proto.Clone(c).(*runtimev1.Container))
	}
	slices.SortFunc(out, func(a, b *runtimev1.Container) int {
		return cmp.Or(cmp.Compare(a.GetCreatedAt(), b.GetCreatedAt()), cmp.Compare(idSeq(a.GetId()), idSeq(b.GetId())))
	})
	return out
}

// idSeq is the sequence number in an id ("sandbox-12" → 12), so that
// objects made at the same instant list in creation order.
func idSeq(id string) int {
	_, n, _ := strings.Cut(id, "-")
	v, _ := strconv.Atoi(n)
	return v
}

func hasLabels(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// exit moves a live container to exited; mu is held.
func (f *Fake) exit(c *runtimev1.Container, code int32, reason string) {
	if c.GetState() == runtimev1.ContainerState_CONTAINER_STATE_EXITED {
		return
	}
	c.State = runtimev1.ContainerState_CONTAINER_STATE_EXITED
	c.ExitCode, c.Reason = code, reason
	c.FinishedAt = f.stamp()
	if c.StartedAt == 0 {
		c.StartedAt = c.FinishedAt
	}
}

// stopSandbox kills the sandbox's containers and marks it not ready; mu
// is held.
func (f *Fake) stopSandbox(id string) {
	sb, ok := f.sandboxes[id]
	if !ok {
		return
	}
	for _, c := range f.containers {
		if c.GetSandboxId() == id {
			f.exit(c, 137, "Killed")
		}
	}
	sb.State = runtimev1.SandboxState_SANDBOX_STATE_NOTREADY
}

// imageRef resolves an image by name or reference; mu is held.
func (f *Fake) imageRef(image string) (string, bool) {
	if ref, ok := f.images[image]; ok {
		return ref, true
	}
	for _, ref := range f.images {
		if ref == image {
			return ref, true
		}
	}
	return "", false
}

// unpullable reports whether the image's registry is under ".invalid".
func unpullable(image string) bool {
	registry, _, found := strings.Cut(image, "/")
	host, _, _ := strings.Cut(registry, ":")
	return found && (host == "invalid" || strings.HasSuffix(host, ".invalid"))
}

func referenceOf(image string) string { return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(image))) }

func logPath(dir, rel string) string {
	if dir == "" || rel == "" {
		return rel
	}
	return filepath.Join(dir, rel)
}
