package lifecycletest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

// Epoch is the harness clock's start: t=1s, so that printed times read as
// steps from the start of a scenario.
var Epoch = time.Unix(1, 0)

// Harness drives the deterministic pod worker core the way the driver
// would, one worker wake at a time in UID order, with a time-incrementing
// clock: +1s after each UpdatePod and SyncKnownPods, +1s per worker wake.
type Harness struct {
	Clock    *FakeClock
	Workers  *lifecycle.PodWorkers
	Runtime  *FakeRuntime
	Registry *prometheus.Registry
	Metrics  *lifecycle.Metrics
	// Dirs and Mirrors are the pod directories and the mirror pod client
	// housekeeping cleans.
	Dirs    *FakePodDirs
	Mirrors *FakeMirrorDeleter

	housekeeper *lifecycle.Housekeeper
	loops       map[types.UID]<-chan struct{}
	held        map[types.UID]*heldWork
	paused      map[types.UID]bool
	cacheMode   map[types.UID]string
	fails       map[string]int
	terminalAt  map[types.UID]int
	syncCount   map[types.UID]int
	config      []*v1.Pod
	mirrors     []*v1.Pod
	statuses    map[types.UID]v1.PodStatus
	done        map[string]chan struct{}
	out         []string
	// Violations lists container starts after termination was requested,
	// by any path (kill, deletion, orphaned by housekeeping, terminal).
	Violations []string
}

type heldWork struct {
	work   lifecycle.Work
	ctx    context.Context
	cancel context.CancelFunc
}

// NewHarness returns a harness with an empty runtime and config.
func NewHarness() *Harness {
	h := &Harness{
		Clock:      NewFakeClock(Epoch),
		Runtime:    NewFakeRuntime(),
		Registry:   prometheus.NewRegistry(),
		Dirs:       NewFakePodDirs(),
		Mirrors:    &FakeMirrorDeleter{},
		loops:      map[types.UID]<-chan struct{}{},
		held:       map[types.UID]*heldWork{},
		paused:     map[types.UID]bool{},
		cacheMode:  map[types.UID]string{},
		fails:      map[string]int{},
		terminalAt: map[types.UID]int{},
		syncCount:  map[types.UID]int{},
		statuses:   map[types.UID]v1.PodStatus{},
		done:       map[string]chan struct{}{},
	}
	h.Metrics = lifecycle.NewMetrics(h.Registry, h.Clock)
	h.Workers = lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{
		Clock: h.Clock, Cache: harnessCache{h}, Metrics: h.Metrics,
	})
	h.Runtime.BeforeStart = func(uid types.UID, c string) error {
		if h.Workers.IsPodTerminationRequested(uid) {
			h.Violations = append(h.Violations, fmt.Sprintf("container %s of %s started after termination was requested", c, uid))
		}
		return nil
	}
	h.housekeeper = &lifecycle.Housekeeper{
		Workers: harnessWorkers{h}, Runtime: h.Runtime, Status: harnessStatus{h},
		Dirs: harnessDirs{h}, Mirrors: harnessMirrors{h},
		Metrics: h.Metrics, Clock: h.Clock,
	}
	return h
}

// harnessCache answers first-sight cache reads as the test configured.
type harnessCache struct{ h *Harness }

func (c harnessCache) Get(uid types.UID) (*lifecycle.PodStatus, error) {
	switch c.h.cacheMode[uid] {
	case "empty":
		return &lifecycle.PodStatus{ID: uid}, nil
	case "running":
		return &lifecycle.PodStatus{ID: uid, SandboxReady: true}, nil
	}
	return nil, fmt.Errorf("cache: %w", lifecycle.ErrNotFound)
}

// harnessWorkers is the PodWorkerSet housekeeping sees.
type harnessWorkers struct{ h *Harness }

func (w harnessWorkers) UpdatePod(o lifecycle.UpdatePodOptions) {
	uid := types.UID("")
	if o.Pod != nil {
		uid = o.Pod.UID
	} else if o.RunningPod != nil {
		uid = o.RunningPod.ID
	}
	extra := ""
	if o.RunningPod != nil {
		extra = " runtime-only"
	}
	w.h.printf("UpdatePod %s %s%s", o.UpdateType, uid, extra)
	w.h.UpdatePod(o)
}

func (w harnessWorkers) SyncKnownPods(d []*v1.Pod) map[types.UID]lifecycle.PodWorkerSync {
	return w.h.SyncKnownPods(d)
}

func (w harnessWorkers) IsPodKnownTerminated(uid types.UID) bool {
	return w.h.Workers.IsPodKnownTerminated(uid)
}

func (w harnessWorkers) IsPodTerminationRequested(uid types.UID) bool {
	return w.h.Workers.IsPodTerminationRequested(uid)
}

func (w harnessWorkers) IsPodForMirrorPodTerminatingByFullName(name string) bool {
	return w.h.Workers.IsPodForMirrorPodTerminatingByFullName(name)
}

// harnessDirs prints every directory removal housekeeping asks for.
type harnessDirs struct{ h *Harness }

func (d harnessDirs) List() ([]types.UID, error) { return d.h.Dirs.List() }

func (d harnessDirs) Remove(uid types.UID) error {
	err := d.h.Dirs.Remove(uid)
	if err != nil {
		d.h.printf("RemovePodDir %s -> error: %v", uid, err)
	} else {
		d.h.printf("RemovePodDir %s", uid)
	}
	return err
}

// harnessMirrors prints every mirror pod deletion housekeeping asks for.
type harnessMirrors struct{ h *Harness }

func (m harnessMirrors) DeleteMirrorPod(ctx context.Context, mirror *v1.Pod) error {
	m.h.printf("DeleteMirrorPod %s uid=%s", lifecycle.PodFullName(mirror), mirror.UID)
	return m.h.Mirrors.DeleteMirrorPod(ctx, mirror)
}

type harnessStatus struct{ h *Harness }

func (s harnessStatus) PodStatus(uid types.UID) (v1.PodStatus, bool) {
	st, ok := s.h.statuses[uid]
	return st, ok
}

func (s harnessStatus) RemoveOrphanedStatuses(keep map[types.UID]struct{}) {
	for uid := range s.h.statuses {
		if _, ok := keep[uid]; !ok {
			delete(s.h.statuses, uid)
		}
	}
}

func (h *Harness) printf(format string, args ...any) {
	h.out = append(h.out, fmt.Sprintf(format, args...))
}

// UpdatePod sends a request to the core and acts on its effects.
func (h *Harness) UpdatePod(o lifecycle.UpdatePodOptions) {
	eff := h.Workers.UpdatePod(o)
	if eff.NewWorker != nil {
		uid := types.UID("")
		if o.Pod != nil {
			uid = o.Pod.UID
		} else {
			uid = o.RunningPod.ID
		}
		h.loops[uid] = eff.NewWorker
	}
	if eff.Cancel != 0 {
		h.cancel(eff.Cancel)
	}
	h.Clock.Step(time.Second)
}

// SyncKnownPods calls the core, cancels what it names and steps the clock.
func (h *Harness) SyncKnownPods(desired []*v1.Pod) map[types.UID]lifecycle.PodWorkerSync {
	r, cancel := h.Workers.SyncKnownPods(desired)
	for _, id := range cancel {
		h.cancel(id)
	}
	h.Clock.Step(time.Second)
	return r
}

// cancel cancels the held work with the ID and prints it.
func (h *Harness) cancel(id uint64) {
	for uid, hw := range h.held {
		if hw.work.ID == id {
			hw.cancel()
			h.printf("cancelled %s of %s", hw.work.WorkType, uid)
		}
	}
}

// Drain wakes signalled workers in UID order until none is signalled.
func (h *Harness) Drain() {
	for range 10000 {
		progressed := false
		for _, uid := range sortedUIDs(h.loops) {
			if _, held := h.held[uid]; held || h.paused[uid] {
				continue
			}
			if h.wake(uid, false) {
				progressed = true
			}
		}
		if !progressed {
			return
		}
	}
	h.printf("error: drain did not settle")
}

func sortedUIDs[V any](m map[types.UID]V) []types.UID {
	out := make([]types.UID, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// wake runs one iteration of a worker loop if it is signalled. With hold,
// the sync* call is recorded but not completed until finish.
func (h *Harness) wake(uid types.UID, hold bool) bool {
	ch, ok := h.loops[uid]
	if !ok {
		return false
	}
	select {
	case _, open := <-ch:
		if !open {
			delete(h.loops, uid)
			return true
		}
	default:
		return false
	}
	h.Clock.Step(time.Second)
	w, outcome := h.Workers.Begin(uid)
	switch outcome {
	case lifecycle.BeginExit:
		delete(h.loops, uid)
		return true
	case lifecycle.BeginIdle:
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	hw := &heldWork{work: w, ctx: ctx, cancel: cancel}
	h.printf("%s", h.describe(w))
	if hold {
		h.held[uid] = hw
		h.printf("  (held)")
		return true
	}
	h.finish(hw, "")
	return true
}

func (h *Harness) describe(w lifecycle.Work) string {
	name := string(w.UID)
	if w.Pod != nil {
		name = w.Pod.Name
	}
	switch w.WorkType {
	case lifecycle.WorkSync:
		return fmt.Sprintf("SyncPod %s %s", name, w.UpdateType)
	case lifecycle.WorkTerminated:
		return fmt.Sprintf("SyncTerminatedPod %s", name)
	}
	if w.RuntimeOnly() {
		return fmt.Sprintf("SyncTerminatingRuntimePod %s", w.RunningPod.ID)
	}
	g := "nil"
	if w.GracePeriod != nil {
		g = strconv.FormatInt(*w.GracePeriod, 10)
	}
	s := fmt.Sprintf("SyncTerminatingPod %s grace=%s", name, g)
	if w.StatusFunc != nil {
		var st v1.PodStatus
		w.StatusFunc(&st)
		s += " status-fn=" + st.Message
	}
	return s
}

// finish performs the sync* call of a work and completes it. forced, when
// not empty, overrides the outcome: "ok", "canceled", "terminal" or an
// error message.
func (h *Harness) finish(hw *heldWork, forced string) {
	res := h.perform(hw)
	switch forced {
	case "":
	case "ok":
		res = lifecycle.WorkResult{}
	case "terminal":
		res = lifecycle.WorkResult{IsTerminal: true}
	case "canceled":
		res = lifecycle.WorkResult{Err: context.Canceled}
	case "network-not-ready":
		res = lifecycle.WorkResult{Err: fmt.Errorf("syncing pod: %w", lifecycle.ErrNetworkNotReady)}
	default:
		res = lifecycle.WorkResult{Err: errors.New(forced)}
	}
	switch {
	case errors.Is(res.Err, context.Canceled):
		h.printf("  -> canceled")
	case res.Err != nil:
		h.printf("  -> error: %v", res.Err)
	case res.IsTerminal:
		h.printf("  -> terminal")
	}
	if h.Workers.Complete(hw.work, res) {
		delete(h.loops, hw.work.UID)
	}
	hw.cancel()
}

func (h *Harness) failing(op string, uid types.UID) error {
	for _, key := range []string{op + "/" + string(uid), op + "/*"} {
		n, ok := h.fails[key]
		if !ok {
			continue
		}
		if n > 0 {
			if n == 1 {
				delete(h.fails, key)
			} else {
				h.fails[key] = n - 1
			}
		}
		return fmt.Errorf("injected %s failure", op)
	}
	return nil
}

// perform is the harness's syncer: it acts on the fake runtime.
func (h *Harness) perform(hw *heldWork) lifecycle.WorkResult {
	w, ctx := hw.work, hw.ctx
	switch w.WorkType {
	case lifecycle.WorkSync:
		if err := ctx.Err(); err != nil {
			return lifecycle.WorkResult{Err: err}
		}
		if err := h.failing("sync", w.UID); err != nil {
			return lifecycle.WorkResult{Err: err}
		}
		h.syncCount[w.UID]++
		if n, ok := h.terminalAt[w.UID]; ok && h.syncCount[w.UID] >= n {
			return lifecycle.WorkResult{IsTerminal: true}
		}
		st, _ := h.Runtime.PodStatus(ctx, w.UID, w.Pod.Name, w.Pod.Namespace)
		return lifecycle.WorkResult{Err: h.Runtime.SyncPod(ctx, w.Pod, st)}
	case lifecycle.WorkTerminating:
		if err := ctx.Err(); err != nil {
			return lifecycle.WorkResult{Err: err}
		}
		if w.RuntimeOnly() {
			if err := h.failing("runtime", w.UID); err != nil {
				return lifecycle.WorkResult{Err: err}
			}
			return lifecycle.WorkResult{Err: h.Runtime.KillPod(ctx, nil, w.RunningPod, 1)}
		}
		if err := h.failing("terminating", w.UID); err != nil {
			return lifecycle.WorkResult{Err: err}
		}
		return lifecycle.WorkResult{Err: h.Runtime.KillPod(ctx, w.Pod, nil, lifecycle.GracePeriod(w.Pod, w.GracePeriod))}
	}
	return lifecycle.WorkResult{Err: h.failing("terminated", w.UID)}
}

// Pod builds a pod from transcript options: uid, name, ns, static,
// grace=N|none, phase, deleted[=N], label, containers=a,b, restart.
func (h *Harness) Pod(c *Cmd) *v1.Pod {
	uid := c.Opt("uid", "1")
	pod := &v1.Pod{}
	pod.UID = types.UID(uid)
	pod.Name = c.Opt("name", "pod-"+uid)
	pod.Namespace = c.Opt("ns", "ns")
	pod.Annotations = map[string]string{}
	if c.Has("static") {
		pod.Annotations[lifecycle.ConfigSourceAnnotation] = "file"
	}
	if c.Has("mirror") {
		pod.Annotations[lifecycle.ConfigMirrorAnnotation] = "x"
	}
	if g := c.Opt("grace", "30"); g != "none" {
		n, _ := strconv.ParseInt(g, 10, 64)
		pod.Spec.TerminationGracePeriodSeconds = &n
	}
	pod.Spec.RestartPolicy = v1.RestartPolicy(c.Opt("restart", string(v1.RestartPolicyAlways)))
	for _, name := range strings.Split(c.Opt("containers", "c"), ",") {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: name})
	}
	pod.Status.Phase = v1.PodPhase(c.Opt("phase", ""))
	if c.Has("deleted") {
		ts := metav1.NewTime(h.Clock.Now())
		pod.DeletionTimestamp = &ts
		if v := c.Opt("deleted", ""); v != "" {
			n, _ := strconv.ParseInt(v, 10, 64)
			pod.DeletionGracePeriodSeconds = &n
		}
	}
	if l := c.Opt("label", ""); l != "" {
		pod.Labels = map[string]string{"version": l}
	}
	return pod
}
