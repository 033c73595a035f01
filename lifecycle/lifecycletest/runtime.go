package lifecycletest

import (
	"context"
	"fmt"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

// FakeRuntime is an in-memory container runtime with no latency. Function
// fields inject per-test behaviour; every mutation is recorded in Calls.
type FakeRuntime struct {
	mu    sync.Mutex
	pods  map[types.UID]*lifecycle.PodStatus
	calls []string
	// BeforeStart runs before each container start; an error refuses it.
	BeforeStart func(uid types.UID, container string) error
	// KillErr, when set, makes KillPod fail for the pod.
	KillErr func(uid types.UID) error
	// ListErr, when set, makes ListPods fail.
	ListErr error
	// Record turns the call log on; it is off for benchmarks.
	Record bool
}

// NewFakeRuntime returns an empty runtime that records its calls.
func NewFakeRuntime() *FakeRuntime {
	return &FakeRuntime{pods: map[types.UID]*lifecycle.PodStatus{}, Record: true}
}

func (r *FakeRuntime) record(format string, args ...any) {
	if r.Record {
		r.calls = append(r.calls, fmt.Sprintf(format, args...))
	}
}

// Note records a line of the caller's in the call log, between the calls
// that came before it and those after: a test marks there what it asked
// of the node (a termination request), to judge the runtime's later calls
// against it.
func (r *FakeRuntime) Note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("note "+format, args...)
}

// Calls returns and clears the call log.
func (r *FakeRuntime) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// AddPod puts a pod with running containers into the runtime, as if it had
// been started before the agent.
func (r *FakeRuntime) AddPod(uid types.UID, name, namespace string, containers ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &lifecycle.PodStatus{ID: uid, Name: name, Namespace: namespace, SandboxReady: true}
	for _, c := range containers {
		s.ContainerStatuses = append(s.ContainerStatuses, lifecycle.ContainerStatus{ID: string(uid) + "/" + c, Name: c, State: lifecycle.ContainerRunning})
	}
	r.pods[uid] = s
}

// RemovePod forgets a pod.
func (r *FakeRuntime) RemovePod(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pods, uid)
}

// ExitContainer makes a running container exit with code.
func (r *FakeRuntime) ExitContainer(uid types.UID, name string, code int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.pods[uid]; s != nil {
		for i := range s.ContainerStatuses {
			c := &s.ContainerStatuses[i]
			if c.Name == name && c.State == lifecycle.ContainerRunning {
				c.State, c.ExitCode = lifecycle.ContainerExited, code
			}
		}
	}
}

// ListPods returns every pod, sorted by UID.
func (r *FakeRuntime) ListPods(context.Context) ([]*lifecycle.RunningPod, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ListErr != nil {
		return nil, r.ListErr
	}
	out := make([]*lifecycle.RunningPod, 0, len(r.pods))
	for _, s := range r.pods {
		rp := &lifecycle.RunningPod{ID: s.ID, Name: s.Name, Namespace: s.Namespace, SandboxReady: s.SandboxReady}
		for _, c := range s.ContainerStatuses {
			rp.Containers = append(rp.Containers, lifecycle.RunningContainer{ID: c.ID, Name: c.Name, State: c.State})
		}
		out = append(out, rp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// PodStatus returns a copy of the pod's status, or an empty status.
func (r *FakeRuntime) PodStatus(_ context.Context, uid types.UID, name, namespace string) (*lifecycle.PodStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusLocked(uid, name, namespace), nil
}

func (r *FakeRuntime) statusLocked(uid types.UID, name, namespace string) *lifecycle.PodStatus {
	s, ok := r.pods[uid]
	if !ok {
		return &lifecycle.PodStatus{ID: uid, Name: name, Namespace: namespace}
	}
	c := *s
	c.ContainerStatuses = append([]lifecycle.ContainerStatus(nil), s.ContainerStatuses...)
	return &c
}

// SyncPod starts the sandbox and every container of the spec that is not
// running, checking ctx before each start.
func (r *FakeRuntime) SyncPod(ctx context.Context, pod *v1.Pod, _ *lifecycle.PodStatus) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.pods[pod.UID]
	if !ok {
		s = &lifecycle.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
		r.pods[pod.UID] = s
	}
	s.SandboxReady = true
	for _, c := range pod.Spec.InitContainers {
		cs := s.Container(c.Name)
		switch {
		case cs != nil && cs.State == lifecycle.ContainerExited && cs.ExitCode == 0:
			continue
		case cs != nil && (cs.State == lifecycle.ContainerRunning || !shouldRestart(pod, cs)):
			return nil
		}
		if err := r.startLocked(ctx, pod, s, c.Name); err != nil {
			return err
		}
		return nil
	}
	for _, c := range pod.Spec.Containers {
		if cs := s.Container(c.Name); cs != nil && (cs.State == lifecycle.ContainerRunning || !shouldRestart(pod, cs)) {
			continue
		}
		if err := r.startLocked(ctx, pod, s, c.Name); err != nil {
			return err
		}
	}
	return nil
}

// startLocked starts one container after checking ctx and BeforeStart.
func (r *FakeRuntime) startLocked(ctx context.Context, pod *v1.Pod, s *lifecycle.PodStatus, name string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("starting container %q: %w", name, err)
	}
	if r.BeforeStart != nil {
		if err := r.BeforeStart(pod.UID, name); err != nil {
			return fmt.Errorf("starting container %q: %w", name, err)
		}
	}
	r.record("start %s/%s", pod.Name, name)
	restarts := int32(0)
	if cs := s.Container(name); cs != nil {
		restarts = cs.RestartCount + 1
	}
	s.ContainerStatuses = append(s.ContainerStatuses[:0:0], filterName(s.ContainerStatuses, name)...)
	s.ContainerStatuses = append(s.ContainerStatuses, lifecycle.ContainerStatus{
		ID: fmt.Sprintf("%s/%s/%d", pod.UID, name, restarts), Name: name,
		State: lifecycle.ContainerRunning, RestartCount: restarts,
	})
	return nil
}

func filterName(in []lifecycle.ContainerStatus, name string) []lifecycle.ContainerStatus {
	out := in[:0:0]
	for _, c := range in {
		if c.Name != name {
			out = append(out, c)
		}
	}
	return out
}

func shouldRestart(pod *v1.Pod, cs *lifecycle.ContainerStatus) bool {
	switch pod.Spec.RestartPolicy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return cs.ExitCode != 0
	}
	return true
}

// KillPod stops every container (exit 137 for running ones) and the sandbox.
func (r *FakeRuntime) KillPod(_ context.Context, pod *v1.Pod, running *lifecycle.RunningPod, grace int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	uid := types.UID("")
	switch {
	case pod != nil:
		uid = pod.UID
	case running != nil:
		uid = running.ID
	}
	r.record("kill %s grace=%d", uid, grace)
	if r.KillErr != nil {
		if err := r.KillErr(uid); err != nil {
			return err
		}
	}
	if s := r.pods[uid]; s != nil {
		s.SandboxReady = false
		for i := range s.ContainerStatuses {
			if c := &s.ContainerStatuses[i]; c.State == lifecycle.ContainerRunning || c.State == lifecycle.ContainerCreated {
				c.State, c.ExitCode, c.Reason = lifecycle.ContainerExited, 137, "Killed"
			}
		}
	}
	return nil
}

// Get implements lifecycle.StatusReader without waiting.
func (r *FakeRuntime) Get(uid types.UID) (*lifecycle.PodStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusLocked(uid, "", ""), nil
}

var _ lifecycle.Runtime = (*FakeRuntime)(nil)
