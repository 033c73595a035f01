package lifecycle_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// TestEventDrivenCacheLosesNoChange runs random sequences through the
// production driver with the PLEG fed only by the runtime's events (no
// periodic relist; a relist now and then): syncs and kills that report their changes
// while in flight, exits of their own, and removals of finished pods, with
// virtual time passing at random in between. Whenever everything waits,
// the cache must show every pod's containers as the runtime holds them:
// an event the PLEG held for a sync in flight, or skipped as already
// seen, must never leave the cache behind the runtime.
func TestEventDrivenCacheLosesNoChange(t *testing.T) {
	for seed := range 24 {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { eventDrivenSequence(t, uint64(seed)) })
		})
	}
}

func eventDrivenSequence(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 13))
	clock := lifecycle.SystemClock{}
	counting := &readCounting{FakeRuntime: lifecycletest.NewFakeRuntime()}
	rt := &eventing{readCounting: counting}
	core, workers, pleg, cache := eventWired(clock, rt, rt)

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	if err := pleg.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { workers.Run(ctx) })
	// Requests, and a relist when the sequence asks for one (the safety
	// net), on the PLEG's one goroutine.
	relist := make(chan struct{})
	wg.Go(func() {
		for pleg.WaitRelist(ctx, nil, relist) {
			_ = pleg.Relist(ctx)
		}
	})
	wg.Go(func() { drainEvents(ctx, pleg) })

	uids := []string{"a", "b", "c"}
	pods := map[string]*v1.Pod{}
	for _, u := range uids {
		p := podWithGrace(u, "pod-"+u, int64(rng.IntN(2)))
		p.Spec.RestartPolicy = []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyNever, v1.RestartPolicyOnFailure}[rng.IntN(3)]
		p.Spec.Containers = []v1.Container{{Name: "c1"}, {Name: "c2"}}
		pods[u] = p
	}
	for step := range 40 {
		u := uids[rng.IntN(len(uids))]
		uid, pod := types.UID(u), pods[u]
		ref := lifecycle.PodRef{UID: uid, Name: pod.Name, Namespace: pod.Namespace}
		switch op := rng.IntN(7); op {
		case 0:
			workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod})
		case 1:
			workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateSync, Pod: pod})
		case 2:
			g := int64(rng.IntN(2))
			workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: pod,
				KillPodOptions: &lifecycle.KillPodOptions{GracePeriodOverride: &g}})
		case 3:
			// The host removes a finished pod's containers; the runtime
			// tells of each removal.
			if !core.ShouldPodBeFinished(uid) {
				continue
			}
			before, _ := rt.Get(uid)
			rt.RemovePod(uid)
			for _, c := range before.ContainerStatuses {
				pleg.RequestEvent(ref, lifecycle.Hint{ContainerID: c.ID, Removed: true})
			}
			pleg.RequestEvent(ref, lifecycle.Hint{})
		case 4:
			relist <- struct{}{}
		default:
			name := []string{"c1", "c2"}[rng.IntN(2)]
			before, _ := rt.Get(uid)
			rt.ExitContainer(uid, name, int32(rng.IntN(2)))
			if c := before.Container(name); c != nil && c.State == lifecycle.ContainerRunning {
				pleg.RequestEvent(ref, lifecycle.Hint{ContainerID: c.ID, State: lifecycle.ContainerExited})
			}
		}
		advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
		synctest.Wait()
		for _, u := range uids {
			uid := types.UID(u)
			if workers.Syncing(uid) {
				continue // its sync waits for virtual time; its end inspects
			}
			want, _ := rt.Get(uid)
			got, err := cache.Get(uid)
			if err != nil {
				t.Fatalf("step %d: cache of %s: %v", step, u, err)
			}
			if w, g := containerStates(want), containerStates(got); !maps.Equal(w, g) {
				t.Fatalf("step %d: the cache shows %s's containers as %v; the runtime holds %v", step, u, g, w)
			}
		}
	}
}

func containerStates(s *lifecycle.PodStatus) map[string]lifecycle.ContainerState {
	out := map[string]lifecycle.ContainerState{}
	for _, c := range s.ContainerStatuses {
		out[c.ID] = c.State
	}
	return out
}
