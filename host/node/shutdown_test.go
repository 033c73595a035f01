package node

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// hookMirrors is a mirror index whose first listing runs hook: the
// desired set lists the mirrors right after it read its pods.
type hookMirrors struct{ hook func() }

func (m *hookMirrors) Mirror(namespace, name string) (*v1.Pod, bool) { return nil, false }

func (m *hookMirrors) Mirrors() []*v1.Pod {
	if h := m.hook; h != nil {
		m.hook = nil
		h()
	}
	return nil
}

// TestShutdownStopsPodsCommittedWhilePlanning: a pod committed to the
// desired set while a node shutdown chooses the pods it stops is either
// one of them or never started.
func TestShutdownStopsPodsCommittedWhilePlanning(t *testing.T) {
	a := newAdmitNode(t)
	n := a.Node
	a.change() // every source reported, no pod yet
	syncer := &shutdownSyncer{PodSyncer: &lifecycletest.FakeSyncer{}, node: n}
	late := pod("1", "a")
	startErr := errors.New("never tried")
	n.desired.mirrors = &hookMirrors{hook: func() {
		// The shutdown has read the desired pods: a change lands and
		// the pod's worker starts it.
		a.change(late)
		_, startErr = syncer.SyncPod(t.Context(), lifecycle.UpdateCreate, late, nil, &lifecycle.PodStatus{})
	}}
	res, err := n.Shutdown(t.Context(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	stopped := slices.ContainsFunc(res.Pods, func(p localapi.ShutdownPod) bool { return p.UID == "1" })
	if !stopped && !errors.Is(startErr, ErrNodeShuttingDown) {
		t.Errorf("pod 1, committed while the shutdown chose its pods, was started (SyncPod: %v) and is not among the pods it stops (%+v)", startErr, res.Pods)
	}
}

// TestShutdownHoldsDeletingPodsToBudget: pods already being deleted, in
// the desired set (a graceful delete) or out of it (a removed manifest),
// stop within the shutdown's budget too, whatever grace period their
// deletion gave them; they finish as deleted pods (no phase kept, not
// started again).
func TestShutdownHoldsDeletingPodsToBudget(t *testing.T) {
	defer goleak.VerifyNone(t)
	a := newAdmitNode(t)
	n := a.Node
	stop := a.runWorkers(&lifecycletest.FakeSyncer{
		// A container stops only at the end of its grace period, unless
		// that is within the budget.
		SyncTerminatingFunc: func(ctx context.Context, pod *v1.Pod, grace *int64) error {
			if grace == nil || *grace > 10 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		},
	})
	defer stop()
	long := func(p *v1.Pod) *v1.Pod {
		p.Spec.TerminationGracePeriodSeconds = new(int64(600))
		return p
	}
	run, del, gone := long(pod("run", "a")), long(pod("del", "a")), long(pod("gone", "a"))
	a.deliver(run, del, gone)
	a.deliver(run, deleted(del, 600)) // del is being deleted, gone left the set
	res, err := n.Shutdown(t.Context(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []types.UID{"run", "del", "gone"} {
		if !n.core.IsPodKnownTerminated(uid) {
			t.Errorf("pod %s still runs after the shutdown returned (result %+v)", uid, res.Pods)
		}
		i := slices.IndexFunc(res.Pods, func(p localapi.ShutdownPod) bool { return p.UID == string(uid) })
		if i < 0 || res.Pods[i].GracePeriodSeconds != 10 {
			t.Errorf("pod %s: not listed with grace 10 in %+v", uid, res.Pods)
		}
	}
	mark, _, err := n.store.ShutdownMark(t.Context())
	if err != nil || !slices.Equal(mark.Pods, []types.UID{"run"}) {
		t.Errorf("shutdown mark pods %v (%v); want only run: the deleted pods are not started again", mark.Pods, err)
	}
	for _, uid := range []types.UID{"del", "gone"} {
		if _, kept := n.shutdown.stopped(uid); kept {
			t.Errorf("pod %s keeps a phase through the shutdown; want it finished as a deleted pod", uid)
		}
	}
}
