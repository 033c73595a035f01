package runtimemanager

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// loseSome is a bare-list runtime that loses the containers of lose
// between ListContainers and ContainerStatus, and notes what it lost.
type loseSome struct {
	bareList
	mu   sync.Mutex
	lose map[string]bool
	lost map[string]bool
}

func (l *loseSome) ContainerStatus(ctx context.Context, req *runtimev1.ContainerStatusRequest, opts ...grpc.CallOption) (*runtimev1.ContainerStatusResponse, error) {
	l.mu.Lock()
	lose := l.lose[req.GetContainerId()]
	if lose {
		l.lost[req.GetContainerId()] = true
	}
	l.mu.Unlock()
	if lose {
		if _, err := l.RemoveContainer(ctx, &runtimev1.RemoveContainerRequest{ContainerId: req.GetContainerId()}); err != nil {
			return nil, err
		}
	}
	return l.bareList.ContainerStatus(ctx, req, opts...)
}

// TestNoExitCodeWithoutEvidence drives a pod through random syncs, exits
// and clock steps over a runtime that loses random containers between the
// listing and their status: every container the Manager reports exited
// has the exit code the runtime holds for it, and a lost one is unknown.
func TestNoExitCodeWithoutEvidence(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := newEnv(t)
		rtc := &loseSome{bareList: bareList{e.client}}
		m, err := New(Options{Runtime: rtc, Clock: e.clock, LogRoot: e.root})
		if err != nil {
			rt.Fatal(err)
		}
		policy := rapid.SampledFrom([]v1.RestartPolicy{v1.RestartPolicyNever, v1.RestartPolicyOnFailure, v1.RestartPolicyAlways}).Draw(rt, "policy")
		pod := withPolicy(newPod("evidence", "a", "b"), policy)
		ctx := context.Background()
		for range rapid.IntRange(1, 20).Draw(rt, "steps") {
			switch rapid.SampledFrom([]string{"sync", "exit", "tick", "status"}).Draw(rt, "action") {
			case "sync":
				_ = m.SyncPod(ctx, pod, nil)
			case "exit":
				if cs := e.fake.Containers(); len(cs) > 0 {
					c := rapid.SampledFrom(cs).Draw(rt, "container")
					e.fake.ExitContainer(c.GetId(), rapid.SampledFrom([]int32{0, 1, 137}).Draw(rt, "code"))
				}
			case "tick":
				e.clock.Step(BackOffInitial)
			case "status":
				truth := map[string]*runtimev1.Container{}
				rtc.mu.Lock()
				rtc.lose, rtc.lost = map[string]bool{}, map[string]bool{}
				for _, c := range e.fake.Containers() {
					truth[c.GetId()] = c
					rtc.lose[c.GetId()] = rapid.Bool().Draw(rt, "lose "+c.GetId())
				}
				rtc.mu.Unlock()
				st, err := m.PodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
				if err != nil {
					rt.Fatalf("PodStatus: %v", err)
				}
				for _, c := range st.ContainerStatuses {
					want := truth[c.ID]
					switch {
					case rtc.lost[c.ID] && c.State != lifecycle.ContainerUnknown:
						rt.Fatalf("container %s lost before its status: reported %s exit %d; want unknown", c.Name, c.State, c.ExitCode)
					case c.State == lifecycle.ContainerExited && (want.GetState() != runtimev1.ContainerState_CONTAINER_STATE_EXITED || c.ExitCode != want.GetExitCode()):
						rt.Fatalf("container %s reported exited %d; the runtime holds %v exit %d", c.Name, c.ExitCode, want.GetState(), want.GetExitCode())
					}
				}
				rtc.mu.Lock()
				rtc.lose = nil
				rtc.mu.Unlock()
			}
		}
	})
}
