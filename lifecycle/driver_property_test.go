package lifecycle_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
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
// terminal phase never regresses, in the cache and in the sink).
//
// Invariant 4 is judged, as in the transcripts, from the runtime's
// recorded calls against the termination request: the test notes each
// request in the runtime's call log once UpdatePod returned (the in-flight
// sync is cancelled by then), and a termination the worker decided itself
// (a terminal SyncPod) once a step ends; a container start recorded after
// that note is a violation. A start whose context check passed while
// UpdatePod ran is recorded before the note, as it may be with real
// goroutines.
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
	// requested holds the pods whose termination request the call log
	// showed; a start of one of them after it is a violation.
	requested := map[string]bool{}
	judgeCalls := func() {
		for _, call := range rt.Calls() {
			if name, ok := strings.CutPrefix(call, "note terminate "); ok {
				requested[name] = true
			}
			if started, ok := strings.CutPrefix(call, "start "); ok {
				if name, c, _ := strings.Cut(started, "/"); requested[name] {
					violate("invariant 4: container %s of %s started after termination was requested (%s)", c, name, call)
				}
			}
		}
	}
	requestTermination := func(opts lifecycle.UpdatePodOptions) {
		workers.UpdatePod(opts)
		rt.Note("terminate %s", opts.Pod.Name)
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
			requestTermination(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: pod,
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
				requestTermination(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateUpdate, Pod: del})
			}
		default:
			rt.ExitContainer(types.UID(u), []string{"c1", "c2"}[rng.IntN(2)], int32(rng.IntN(2)))
		}
		// Let virtual time pass, relist as the PLEG would and flush
		// statuses. One step in three has no relist: a worker that began a
		// sync then still waits for a fresh status when the next step's
		// termination request comes.
		advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
		if rng.IntN(3) > 0 {
			if err := pleg.Relist(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for len(pleg.Events()) > 0 {
			<-pleg.Events()
		}
		synctest.Wait()
		status.SyncBatch(ctx, step%5 == 4)
		judgeCalls()

		for _, u := range uids {
			if core.IsPodTerminationRequested(types.UID(u)) {
				// Requested by the worker itself (a terminal SyncPod),
				// or by the test: either way, before the next step.
				requested[pods[u].Name] = true
			}
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
