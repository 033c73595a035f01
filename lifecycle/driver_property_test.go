package lifecycle_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// TestDriverInvariants runs random event sequences through the production
// driver (Workers.Run, one goroutine per pod) with the real Syncer, status
// manager and PLEG over the in-memory runtime, inside a synctest bubble so
// that virtual time makes each seed reproducible. After every step it
// checks invariants 3 and 4 of docs/lifecycle.md and status rule 5(d) (a
// terminal phase never regresses, in the cache and in the sink). Invariant
// 4 is checked here in its weaker form, no start once the worker began
// terminating: with real goroutines a start that passed its context check
// just before the request is not a violation. The single-threaded harness
// checks it from the moment of the request.
func TestDriverInvariants(t *testing.T) {
	for seed := range 24 {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { driverSequence(t, uint64(seed)) })
		})
	}
}

func driverSequence(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 4))
	clock := lifecycle.SystemClock{}
	rt := lifecycletest.NewFakeRuntime()
	cache := lifecycle.NewCache()
	sink := lifecycletest.NewRecordingSink()
	core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock, Cache: cache})
	status := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock, Sink: sink, Pods: core})
	workers := lifecycle.NewWorkers(core, &lifecycle.Syncer{Runtime: rt, Status: status, Pods: core}, cache, nil)
	pleg := lifecycle.NewPLEG(rt, cache, clock, nil)

	var mu sync.Mutex
	var violations []string
	violate := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		violations = append(violations, fmt.Sprintf(format, args...))
	}
	rt.BeforeStart = func(uid types.UID, c string) error {
		if st, ok := core.Inspect(uid); ok && st.StartedTerminating {
			violate("invariant 4: container %s of %s started after termination was observed", c, uid)
		}
		return nil
	}
	sinkTerminal := map[string]v1.PodPhase{}
	sink.OnPut = func(_, name string, s v1.PodStatus) {
		if p := sinkTerminal[name]; p != "" && s.Phase != p {
			violate("status rule 5(d): sink phase of %s went from %s to %s", name, p, s.Phase)
		}
		if isTerminal(s.Phase) {
			sinkTerminal[name] = s.Phase
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { workers.Run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
	}()

	uids := []string{"a", "b", "c"}
	pods := map[string]*v1.Pod{}
	for _, u := range uids {
		p := podWithGrace(u, "pod-"+u, int64(rng.IntN(3)))
		p.Spec.RestartPolicy = []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyNever, v1.RestartPolicyOnFailure}[rng.IntN(3)]
		p.Spec.Containers = []v1.Container{{Name: "c1"}, {Name: "c2"}}
		pods[u] = p
		sink.Store(p)
	}
	lastRank := map[string]int{}
	terminal := map[string]v1.PodPhase{}
	for step := range 40 {
		u := uids[rng.IntN(len(uids))]
		pod := pods[u]
		switch op := rng.IntN(6); op {
		case 0:
			workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod})
		case 1:
			workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateSync, Pod: pod})
		case 2:
			g := int64(rng.IntN(3))
			workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: pod,
				KillPodOptions: &lifecycle.KillPodOptions{GracePeriodOverride: &g}})
		case 3:
			if pod.DeletionTimestamp == nil {
				del := pod.DeepCopy()
				ts := metav1.NewTime(time.Now())
				g := int64(rng.IntN(3))
				del.DeletionTimestamp, del.DeletionGracePeriodSeconds = &ts, &g
				pods[u] = del
				if api, ok := sink.Pod(del.Namespace, del.Name); ok {
					api.DeletionTimestamp, api.DeletionGracePeriodSeconds = &ts, &g
					sink.Store(api)
				}
				workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateUpdate, Pod: del})
			}
		default:
			rt.ExitContainer(types.UID(u), []string{"c1", "c2"}[rng.IntN(2)], int32(rng.IntN(2)))
		}
		// Let virtual time pass, relist as the PLEG would and flush statuses.
		advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
		if err := pleg.Relist(ctx); err != nil {
			t.Fatal(err)
		}
		for len(pleg.Events()) > 0 {
			<-pleg.Events()
		}
		synctest.Wait()
		status.SyncBatch(ctx, step%5 == 4)

		for _, u := range uids {
			if st, ok := core.Inspect(types.UID(u)); ok {
				if r := rank(st); r < lastRank[u] {
					violate("invariant 3: %s went from rank %d back to %d", u, lastRank[u], r)
				} else {
					lastRank[u] = r
				}
			}
			if s, ok := status.PodStatus(types.UID(u)); ok {
				if p := terminal[u]; p != "" && s.Phase != p {
					violate("status rule 5(d): cached phase of %s went from %s to %s", u, p, s.Phase)
				}
				if isTerminal(s.Phase) {
					terminal[u] = s.Phase
				}
			}
		}
		mu.Lock()
		v := violations
		mu.Unlock()
		if len(v) > 0 {
			t.Fatalf("seed %d step %d: %v", seed, step, v)
		}
	}
}
