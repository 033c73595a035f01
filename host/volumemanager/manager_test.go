package volumemanager

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
	"k8s.io/apimachinery/pkg/types"
)

// fakePlugins answers each call with the next error queued for its kind
// (nil when none) and reports every call on calls.
type fakePlugins struct {
	mu      sync.Mutex
	results map[OpKind][]error
	calls   chan string
	store   *MemoryStore
	saved   []string // the saved device state of the volume at each call
}

func newFakePlugins(store *MemoryStore) *fakePlugins {
	return &fakePlugins{results: map[OpKind][]error{}, calls: make(chan string, 100), store: store}
}

func (f *fakePlugins) queue(k OpKind, errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results[k] = append(f.results[k], errs...)
}

func (f *fakePlugins) do(k OpKind, id VolumeID, pod types.UID) error {
	recs, _ := f.store.Load(context.Background())
	f.mu.Lock()
	var err error
	if q := f.results[k]; len(q) > 0 {
		err, f.results[k] = q[0], q[1:]
	}
	for _, r := range recs {
		if r.Volume.ID == id {
			f.saved = append(f.saved, r.Device.String())
		}
	}
	f.mu.Unlock()
	call := k.String() + " " + string(id)
	if pod != "" {
		call += " " + string(pod)
	}
	f.calls <- call
	return err
}

func (f *fakePlugins) Stage(_ context.Context, v Volume) error   { return f.do(OpStage, v.ID, "") }
func (f *fakePlugins) Unstage(_ context.Context, v Volume) error { return f.do(OpUnstage, v.ID, "") }
func (f *fakePlugins) Publish(_ context.Context, pv PodVolume) error {
	return f.do(OpPublish, pv.Volume.ID, pv.Pod)
}
func (f *fakePlugins) Unpublish(_ context.Context, pv PodVolume) error {
	return f.do(OpUnpublish, pv.Volume.ID, pv.Pod)
}
func (f *fakePlugins) Map(_ context.Context, pv PodVolume) error {
	return f.do(OpMap, pv.Volume.ID, pv.Pod)
}
func (f *fakePlugins) Unmap(_ context.Context, pv PodVolume) error {
	return f.do(OpUnmap, pv.Volume.ID, pv.Pod)
}

// expectCalls waits, up to a deadline, for the next calls in order.
func (f *fakePlugins) expectCalls(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for _, w := range want {
		select {
		case got := <-f.calls:
			if got != w {
				t.Fatalf("call %q, want %q", got, w)
			}
		case <-deadline:
			t.Fatalf("no call %q within the deadline", w)
		}
	}
}

type recordedEvents struct {
	mu  sync.Mutex
	got []string
	ch  chan string // each event, when not nil
}

func (e *recordedEvents) Event(pod types.UID, typ, reason, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ev := string(pod) + " " + typ + " " + reason + " " + msg
	e.got = append(e.got, ev)
	if e.ch != nil {
		e.ch <- ev
	}
}

func startManager(t *testing.T, store Store, plugins Plugins, events Events) (*Manager, *lifecycletest.FakeClock) {
	t.Helper()
	clock := lifecycletest.NewFakeClock(time.Unix(0, 0))
	m := NewManager(Config{Plugins: plugins, Classifier: testClassifier, Store: store, Clock: clock, Resolver: testResolver{}, Events: events})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	return m, clock
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestManagerMountsAndUnmounts runs scenario A1 through the driver: the
// state is saved as uncertain before each mount call reaches the plugin.
func TestManagerMountsAndUnmounts(t *testing.T) {
	store := &MemoryStore{}
	plugins := newFakePlugins(store)
	m, _ := startManager(t, store, plugins, nil)
	m.MarkDesiredPopulated()
	pod := testPod("p1", "pvc:c1")
	if err := m.WaitForAttachAndMount(testCtx(t), pod); err != nil {
		t.Fatal(err)
	}
	plugins.expectCalls(t, "stage kubernetes.io/csi/drv^c1", "publish kubernetes.io/csi/drv^c1 p1")
	if got := m.VolumesInUse(); len(got) != 1 || got[0] != "kubernetes.io/csi/drv^c1" {
		t.Errorf("in use %v", got)
	}
	if err := m.UnmountVolumes(testCtx(t), pod); err != nil {
		t.Fatal(err)
	}
	if !m.PodVolumesUnmounted("p1") {
		t.Error("PodVolumesUnmounted false after UnmountVolumes")
	}
	plugins.expectCalls(t, "unpublish kubernetes.io/csi/drv^c1 p1", "unstage kubernetes.io/csi/drv^c1")
	plugins.mu.Lock()
	defer plugins.mu.Unlock()
	if want := []string{"uncertain", "mounted", "mounted", "uncertain"}; strings.Join(plugins.saved, ",") != strings.Join(want, ",") {
		t.Errorf("saved device state at each call %v, want %v", plugins.saved, want)
	}
}

// TestUnboundClaimIsRetriable checks that a claim not bound yet fails the
// wait at once with an error that is not an invalid spec (the pod's next
// sync asks again) and a FailedMount event naming the claim, and that the
// pod mounts once the claim resolves.
func TestUnboundClaimIsRetriable(t *testing.T) {
	store := &MemoryStore{}
	plugins := newFakePlugins(store)
	events := &recordedEvents{}
	m, _ := startManager(t, store, plugins, events)
	m.MarkDesiredPopulated()
	err := m.WaitForAttachAndMount(testCtx(t), testPod("p1", "pvc:unbound"))
	if !errors.Is(err, ErrClaimNotBound) || errors.Is(err, ErrInvalidVolume) {
		t.Fatalf("err %v; want ErrClaimNotBound, not ErrInvalidVolume", err)
	}
	events.mu.Lock()
	got := strings.Join(events.got, "\n")
	events.mu.Unlock()
	if want := "p1 Warning FailedMount Unable to attach or mount volumes: pod ns/pod-p1: spec.volumes[0].persistentVolumeClaim: claim ns/unbound is not bound"; got != want {
		t.Errorf("events %q; want %q", got, want)
	}
	if err := m.WaitForAttachAndMount(testCtx(t), testPod("p1", "pvc:c1")); err != nil {
		t.Fatalf("after the claim resolves: %v", err)
	}
}

// TestWaitForAttachAndMountIsCancellable checks that a pod whose volume
// keeps failing waits until its context ends, with an error naming the
// volume and the last failure, and that the retry waits for the clock.
func TestWaitForAttachAndMountIsCancellable(t *testing.T) {
	store := &MemoryStore{}
	plugins := newFakePlugins(store)
	plugins.queue(OpStage, codeErr("DeadlineExceeded"))
	events := &recordedEvents{ch: make(chan string, 10)}
	m, clock := startManager(t, store, plugins, events)
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error)
	go func() { errc <- m.WaitForAttachAndMount(ctx, testPod("p1", "pvc:c1")) }()
	plugins.expectCalls(t, "stage kubernetes.io/csi/drv^c1")
	select { // the failure is recorded
	case <-events.ch:
	case <-ctx.Done():
		t.Fatal("no event")
	}
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "unmounted volumes=[c1]") || !strings.Contains(err.Error(), "DeadlineExceeded") {
		t.Fatalf("err %v", err)
	}
	select {
	case c := <-plugins.calls:
		t.Fatalf("call %q before the back-off ended", c)
	default:
	}
	clock.Step(InitialBackoff)
	plugins.expectCalls(t, "stage kubernetes.io/csi/drv^c1", "publish kubernetes.io/csi/drv^c1 p1")
	events.mu.Lock()
	defer events.mu.Unlock()
	want := `p1 Warning FailedMount MountVolume.MountDevice failed for volume "pv-c1" : rpc error: code = DeadlineExceeded`
	if len(events.got) != 1 || events.got[0] != want {
		t.Errorf("events %q, want %q", events.got, want)
	}
}

// TestManagerReportsFailedUnstage: an unstage that fails gives a node
// event (pod "") naming the volume and the error, and is retried.
func TestManagerReportsFailedUnstage(t *testing.T) {
	store := &MemoryStore{}
	plugins := newFakePlugins(store)
	events := &recordedEvents{ch: make(chan string, 10)}
	m, clock := startManager(t, store, plugins, events)
	m.MarkDesiredPopulated()
	pod := testPod("p1", "pvc:c1")
	if err := m.WaitForAttachAndMount(testCtx(t), pod); err != nil {
		t.Fatal(err)
	}
	plugins.expectCalls(t, "stage kubernetes.io/csi/drv^c1", "publish kubernetes.io/csi/drv^c1 p1")
	plugins.queue(OpUnstage, codeErr("Internal"))
	if err := m.UnmountVolumes(testCtx(t), pod); err != nil {
		t.Fatal(err)
	}
	plugins.expectCalls(t, "unpublish kubernetes.io/csi/drv^c1 p1", "unstage kubernetes.io/csi/drv^c1")
	want := ` Warning FailedUnmountDevice UnmountDevice failed for volume "pv-c1" : rpc error: code = Internal`
	select {
	case got := <-events.ch:
		if !strings.HasPrefix(got, want) {
			t.Errorf("event %q, want %q…", got, want)
		}
	case <-testCtx(t).Done():
		t.Fatal("no event for the failed unstage")
	}
	clock.Step(InitialBackoff)
	plugins.expectCalls(t, "unstage kubernetes.io/csi/drv^c1")
}

// TestWaitForAttachAndMountRejectsBadSpec checks the field error.
func TestWaitForAttachAndMountRejectsBadSpec(t *testing.T) {
	store := &MemoryStore{}
	m, _ := startManager(t, store, newFakePlugins(store), nil)
	pod := testPod("p1", "host:x")
	pod.Spec.Volumes[0].HostPath.Path = ""
	err := m.WaitForAttachAndMount(testCtx(t), pod)
	if !errors.Is(err, ErrInvalidVolume) || !strings.Contains(err.Error(), "spec.volumes[0].hostPath.path: required") {
		t.Fatalf("err %v", err)
	}
}

// failingStore fails every Save.
type failingStore struct{ MemoryStore }

func (*failingStore) Save(context.Context, []Record) error { return errors.New("disk full") }

// TestUnsavedOperationIsNotStarted checks that an operation whose state
// cannot be saved first never reaches the plugin and changes nothing.
func TestUnsavedOperationIsNotStarted(t *testing.T) {
	store := &failingStore{}
	plugins := newFakePlugins(&store.MemoryStore)
	events := &recordedEvents{ch: make(chan string, 10)}
	m, _ := startManager(t, store, plugins, events)
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error)
	go func() { errc <- m.WaitForAttachAndMount(ctx, testPod("p1", "pvc:c1")) }()
	select {
	case ev := <-events.ch:
		if !strings.Contains(ev, "FailedMount") || !strings.Contains(ev, "disk full") {
			t.Errorf("event %q", ev)
		}
	case <-ctx.Done():
		t.Fatal("no FailedMount event")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "volume operation not started") {
		t.Fatalf("err %v", err)
	}
	select {
	case c := <-plugins.calls:
		t.Fatalf("call %q reached the plugin", c)
	default:
	}
}

// fixedDirs is a DirLister.
type fixedDirs []PodVolumeDir

func (d fixedDirs) PodVolumeDirs(context.Context) ([]PodVolumeDir, error) { return d, nil }

// TestManagerReconstructs checks D33 through the driver: records loaded,
// nothing torn down before MarkDesiredPopulated, then unpublish and
// unstage.
func TestManagerReconstructs(t *testing.T) {
	vol := Volume{ID: "kubernetes.io/csi/drv^c1", Plugin: PluginCSI, Shared: true}
	store := &MemoryStore{}
	_ = store.Save(context.Background(), []Record{{Volume: vol, Device: Mounted, Pods: []PodRecord{{Pod: "p1", Name: "c1", State: Mounted}}}})
	plugins := newFakePlugins(store)
	clock := lifecycletest.NewFakeClock(time.Unix(0, 0))
	m := NewManager(Config{Plugins: plugins, Classifier: testClassifier, Store: store, Clock: clock, Resolver: testResolver{}})
	if err := m.Reconstruct(testCtx(t), fixedDirs{{Pod: "p1", Plugin: PluginCSI, Name: "c1"}}, answers{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if m.PodVolumesUnmounted("p1") {
		t.Fatal("reconstructed pod reported unmounted")
	}
	m.MarkDesiredPopulated()
	plugins.expectCalls(t, "unpublish kubernetes.io/csi/drv^c1 p1", "unstage kubernetes.io/csi/drv^c1")
}

// TestPluginDeathMidStageIsCleanedUp checks A4 with a plugin that dies
// during NodeStage: the device is uncertain, and once the pod goes it is
// unstaged although it was never known to be staged.
func TestPluginDeathMidStageIsCleanedUp(t *testing.T) {
	store := &MemoryStore{}
	plugins := newFakePlugins(store)
	plugins.queue(OpStage, errPluginDied)
	events := &recordedEvents{ch: make(chan string, 10)}
	m, _ := startManager(t, store, plugins, events)
	m.MarkDesiredPopulated()
	ctx, cancel := context.WithCancel(testCtx(t))
	pod := testPod("p1", "pvc:c1")
	errc := make(chan error)
	go func() { errc <- m.WaitForAttachAndMount(ctx, pod) }()
	plugins.expectCalls(t, "stage kubernetes.io/csi/drv^c1")
	select {
	case <-events.ch:
	case <-ctx.Done():
		t.Fatal("no event")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if err := m.UnmountVolumes(testCtx(t), pod); err != nil {
		t.Fatal(err)
	}
	plugins.expectCalls(t, "unstage kubernetes.io/csi/drv^c1")
}
