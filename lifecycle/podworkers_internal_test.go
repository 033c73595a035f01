package lifecycle

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time                       { return c.now }
func (c *stepClock) After(time.Duration) <-chan time.Time { return make(chan time.Time) }
func newCore() (*PodWorkers, *stepClock) {
	c := &stepClock{now: time.Unix(1, 0)}
	return NewPodWorkers(PodWorkersConfig{Clock: c}), c
}

func ptr[T any](v T) *T { return &v }

func TestEffectiveGracePeriod(t *testing.T) {
	// A14: grace period arithmetic, starting from unset.
	tests := []struct {
		name          string
		current       int64
		spec          int64
		deletion      *int64
		override      *int64
		want          int64
		wantShortened bool
	}{
		{name: "A14 spec only", spec: 30, want: 30},
		{name: "A14 deletion grace wins", spec: 30, deletion: ptr[int64](5), want: 5},
		{name: "A14 override below deletion", spec: 30, deletion: ptr[int64](5), override: ptr[int64](2), want: 2},
		{name: "A14 deletion grace zero clamps to 1", spec: 30, deletion: ptr[int64](0), want: 1},
		{name: "A14 override zero clamps to 1", spec: 30, deletion: ptr[int64](5), override: ptr[int64](0), want: 1},
		{name: "A14 larger deletion grace never raises", current: 5, spec: 30, deletion: ptr[int64](20), want: 5},
		{name: "A14 larger override never raises", current: 5, spec: 30, override: ptr[int64](20), want: 5},
		{name: "A15 shorter deletion grace shortens", current: 30, spec: 30, deletion: ptr[int64](5), want: 5, wantShortened: true},
		{name: "A19 override zero and no spec gives 1", override: ptr[int64](0), want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &v1.Pod{}
			pod.Spec.TerminationGracePeriodSeconds = &tt.spec
			pod.DeletionGracePeriodSeconds = tt.deletion
			got, shortened := effectiveGracePeriod(tt.current, pod, tt.override)
			if got != tt.want || shortened != tt.wantShortened {
				t.Errorf("got %d, shortened %t; want %d, %t", got, shortened, tt.want, tt.wantShortened)
			}
		})
	}
}

// drainCore runs every signalled worker with a syncer that always succeeds
// and records the calls per UID.
func drainCore(p *PodWorkers, loops map[types.UID]<-chan struct{}, calls map[types.UID][]string) {
	for progressed := true; progressed; {
		progressed = false
		for uid, ch := range loops {
			select {
			case _, ok := <-ch:
				progressed = true
				if !ok {
					delete(loops, uid)
					continue
				}
			default:
				continue
			}
			w, out := p.Begin(uid)
			if out != BeginRun {
				continue
			}
			switch w.WorkType {
			case WorkSync:
				calls[uid] = append(calls[uid], fmt.Sprintf("%s:%s", w.UpdateType, w.Pod.Name))
			case WorkTerminating:
				calls[uid] = append(calls[uid], fmt.Sprintf("kill(%d)", *w.GracePeriod))
			case WorkTerminated:
				calls[uid] = append(calls[uid], "terminated")
			}
			if p.Complete(w, WorkResult{}) {
				delete(loops, uid)
			}
		}
	}
}

func testPod(uid, name string) *v1.Pod {
	p := &v1.Pod{}
	p.UID, p.Name, p.Namespace = types.UID(uid), name, "ns"
	p.Spec.TerminationGracePeriodSeconds = ptr[int64](30)
	return p
}

func TestCoalescingLastWriterWins(t *testing.T) {
	t.Run("A2 coalesced creates: the last writer wins", func(t *testing.T) {
		// A2: for i in 0..19, for j in i..19, create UID j with name i; each UID
		// j is processed between 1 and j+1 times and the last name is j.
		p, _ := newCore()
		loops := map[types.UID]<-chan struct{}{}
		calls := map[types.UID][]string{}
		for i := range 20 {
			for j := i; j < 20; j++ {
				eff := p.UpdatePod(UpdatePodOptions{UpdateType: UpdateCreate, Pod: testPod(fmt.Sprint(j), fmt.Sprint(i))})
				if eff.NewWorker != nil {
					loops[types.UID(fmt.Sprint(j))] = eff.NewWorker
				}
			}
			if i%3 == 0 {
				drainCore(p, loops, calls)
			}
		}
		drainCore(p, loops, calls)
		for j := range 20 {
			c := calls[types.UID(fmt.Sprint(j))]
			if len(c) < 1 || len(c) > j+1 {
				t.Errorf("uid %d processed %d times; want 1..%d", j, len(c), j+1)
			}
			if last := c[len(c)-1]; last != fmt.Sprintf("update:%d", j) && last != fmt.Sprintf("create:%d", j) {
				t.Errorf("uid %d last processed %q; want name %d", j, last, j)
			}
		}
	})
}

func TestKillIsNeverLost(t *testing.T) {
	t.Run("A7 a kill is never lost", func(t *testing.T) {
		// A7: create, kill and update back to back for 20 pods: every history
		// is [kill(30), terminated] or [create, kill(30), terminated].
		p, _ := newCore()
		loops := map[types.UID]<-chan struct{}{}
		calls := map[types.UID][]string{}
		for i := range 20 {
			pod := testPod(fmt.Sprint(i), "p")
			for _, ut := range []UpdateType{UpdateCreate, UpdateKill, UpdateUpdate} {
				if eff := p.UpdatePod(UpdatePodOptions{UpdateType: ut, Pod: pod}); eff.NewWorker != nil {
					loops[pod.UID] = eff.NewWorker
				}
				if i%2 == 1 && ut == UpdateCreate {
					drainCore(p, loops, calls)
				}
			}
		}
		drainCore(p, loops, calls)
		for i := range 20 {
			got := calls[types.UID(fmt.Sprint(i))]
			a := []string{"kill(30)", "terminated"}
			b := []string{"create:p", "kill(30)", "terminated"}
			if !slices.Equal(got, a) && !slices.Equal(got, b) {
				t.Errorf("uid %d history %v; want %v or %v", i, got, a, b)
			}
		}
	})
}

func TestAllowPodStart(t *testing.T) {
	// C33: the allowPodStart table.
	static := func(uid string) *v1.Pod {
		p := testPod(uid, "foo")
		p.Annotations = map[string]string{ConfigSourceAnnotation: "file"}
		return p
	}
	const name = "foo_ns"
	tests := []struct {
		name         string
		pod          *v1.Pod
		statuses     map[string]*podSyncStatus // uid -> status (fullname filled in)
		started      map[string]types.UID
		waiting      []types.UID
		wantStart    bool
		wantEver     bool
		wantWaiting  []types.UID
		wantHolder   types.UID
		wantNoStatus bool
	}{
		{name: "C33 non-static always allowed even with a holder", pod: testPod("1", "foo"),
			statuses: map[string]*podSyncStatus{"1": {}}, started: map[string]types.UID{name: "2"},
			wantStart: true, wantEver: true, wantHolder: "2"},
		{name: "C33 static with no holder becomes holder", pod: static("1"),
			statuses: map[string]*podSyncStatus{"1": {}}, wantStart: true, wantEver: true, wantHolder: "1"},
		{name: "C33 static with another holder waits", pod: static("1"),
			statuses: map[string]*podSyncStatus{"1": {}, "2": {}}, started: map[string]types.UID{name: "2"},
			waiting: []types.UID{"1"}, wantStart: false, wantEver: true, wantWaiting: []types.UID{"1"}, wantHolder: "2"},
		{name: "C33 static that already holds", pod: static("1"),
			statuses: map[string]*podSyncStatus{"1": {}}, started: map[string]types.UID{name: "1"},
			wantStart: true, wantEver: true, wantHolder: "1"},
		{name: "C33 first waiter is allowed and removed", pod: static("1"),
			statuses: map[string]*podSyncStatus{"1": {}, "2": {}}, waiting: []types.UID{"1", "2"},
			wantStart: true, wantEver: true, wantWaiting: []types.UID{"2"}, wantHolder: "1"},
		{name: "C33 behind a valid waiter, list unchanged", pod: static("1"),
			statuses: map[string]*podSyncStatus{"1": {}, "2": {}}, waiting: []types.UID{"2", "1"},
			wantStart: false, wantEver: true, wantWaiting: []types.UID{"2", "1"}},
		{name: "C33 waiters without status are trimmed", pod: static("0"),
			statuses: map[string]*podSyncStatus{"0": {}, "1": {}}, waiting: []types.UID{"2", "2", "3", "0", "1"},
			wantStart: true, wantEver: true, wantWaiting: []types.UID{"1"}, wantHolder: "0"},
		{name: "C33 terminating and terminated waiters are skipped", pod: static("0"),
			statuses: map[string]*podSyncStatus{"0": {}, "1": {}, "2": {terminatingAt: time.Unix(1, 0)},
				"3": {terminatingAt: time.Unix(1, 0), terminatedAt: time.Unix(2, 0)}},
			waiting: []types.UID{"2", "3", "0", "1"}, wantStart: true, wantEver: true, wantWaiting: []types.UID{"1"}, wantHolder: "0"},
		{name: "C33 no sync status", pod: static("1"), wantNoStatus: true, wantStart: false, wantEver: false},
		{name: "C33 termination requested, list untouched", pod: static("1"),
			statuses: map[string]*podSyncStatus{"1": {terminatingAt: time.Unix(1, 0)}, "2": {}}, waiting: []types.UID{"2", "1"},
			wantStart: false, wantEver: false, wantWaiting: []types.UID{"2", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newCore()
			for uid, s := range tt.statuses {
				s.uid, s.fullname = types.UID(uid), name
				p.statuses[types.UID(uid)] = s
			}
			for k, v := range tt.started {
				p.startedStatic[k] = v
			}
			if tt.waiting != nil {
				p.waitingStatic[name] = slices.Clone(tt.waiting)
			}
			start, ever := p.allowPodStart(tt.pod, p.statuses[tt.pod.UID])
			if start != tt.wantStart || ever != tt.wantEver {
				t.Errorf("got (%t, %t); want (%t, %t)", start, ever, tt.wantStart, tt.wantEver)
			}
			if got := p.waitingStatic[name]; !slices.Equal(got, tt.wantWaiting) {
				t.Errorf("waiting %v; want %v", got, tt.wantWaiting)
			}
			if got := p.startedStatic[name]; got != tt.wantHolder {
				t.Errorf("holder %q; want %q", got, tt.wantHolder)
			}
		})
	}
}

func TestRemoveTerminatedWorker(t *testing.T) {
	// D34–D39: what SyncKnownPods does with each kind of worker.
	at := time.Unix(1, 0)
	pod := testPod("1", "p")
	active := &UpdatePodOptions{Pod: pod}
	pending := &UpdatePodOptions{UpdateType: UpdateUpdate, Pod: pod}
	tests := []struct {
		name        string
		status      podSyncStatus
		orphan      bool
		wantRemoved bool
		wantPending *UpdatePodOptions
		wantWorking bool
		wantSignals int
		wantDeleted bool
	}{
		{name: "D34 finished orphan is removed", status: podSyncStatus{finished: true, startedAt: at, terminatedAt: at}, orphan: true, wantRemoved: true},
		{name: "D34 finished non-orphan awaiting restart is removed", status: podSyncStatus{finished: true, restartRequested: true, startedAt: at, terminatedAt: at}, wantRemoved: true},
		{name: "D35 finished non-orphan stays until it leaves config", status: podSyncStatus{finished: true, startedAt: at, terminatedAt: at}},
		{name: "D35 unfinished non-orphan is kept", status: podSyncStatus{pending: pending, working: true}, wantPending: pending, wantWorking: true},
		{name: "D36 never-started orphan without runtime observation is removed", status: podSyncStatus{pending: pending}, orphan: true, wantRemoved: true},
		{name: "D37 started orphan terminates by replay", status: podSyncStatus{startedAt: at, active: active}, orphan: true,
			wantPending: &UpdatePodOptions{Pod: pod}, wantWorking: true, wantSignals: 1, wantDeleted: true},
		{name: "D38 terminating orphan replays its active update", status: podSyncStatus{startedAt: at, terminatingAt: at, active: active}, orphan: true,
			wantPending: &UpdatePodOptions{Pod: pod}, wantWorking: true, wantSignals: 1, wantDeleted: true},
		{name: "D38 terminating orphan keeps its pending update", status: podSyncStatus{startedAt: at, terminatingAt: at, active: active, pending: pending}, orphan: true,
			wantPending: pending, wantWorking: true, wantSignals: 1, wantDeleted: true},
		{name: "D38 terminating orphan with neither is kept, nothing queued", status: podSyncStatus{startedAt: at, terminatingAt: at}, orphan: true, wantDeleted: true},
		{name: "D39 terminated unfinished orphan replays", status: podSyncStatus{startedAt: at, terminatingAt: at, terminatedAt: at, active: active}, orphan: true,
			wantPending: &UpdatePodOptions{Pod: pod}, wantWorking: true, wantSignals: 1, wantDeleted: true},
		{name: "D39 terminated unfinished orphan keeps pending", status: podSyncStatus{startedAt: at, terminatingAt: at, terminatedAt: at, active: active, pending: pending}, orphan: true,
			wantPending: pending, wantWorking: true, wantSignals: 1, wantDeleted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newCore()
			s := tt.status
			s.uid, s.fullname = "1", "p_ns"
			s.notify = make(chan struct{}, 1)
			if s.pending != nil && tt.wantSignals == 1 {
				s.notify <- struct{}{} // already signalled: must not double-signal
			}
			ch := s.notify
			p.statuses["1"] = &s
			var desired []*v1.Pod
			if !tt.orphan {
				desired = []*v1.Pod{pod}
			}
			res, _ := p.SyncKnownPods(desired)
			_, kept := p.statuses["1"]
			if _, reported := res["1"]; reported != kept {
				t.Errorf("reported %t but kept %t", reported, kept)
			}
			if kept == tt.wantRemoved {
				t.Fatalf("removed %t; want %t", !kept, tt.wantRemoved)
			}
			if tt.wantRemoved {
				if _, open := <-ch; open {
					t.Errorf("notifier of a removed worker is open")
				}
				return
			}
			got := p.statuses["1"]
			if (got.pending == nil) != (tt.wantPending == nil) || (got.pending != nil && (got.pending.UpdateType != tt.wantPending.UpdateType || got.pending.Pod != tt.wantPending.Pod)) {
				t.Errorf("pending %+v; want %+v", got.pending, tt.wantPending)
			}
			if got.working != tt.wantWorking || len(ch) != tt.wantSignals || got.deleted != tt.wantDeleted {
				t.Errorf("working %t, signals %d, deleted %t; want %t, %d, %t", got.working, len(ch), got.deleted, tt.wantWorking, tt.wantSignals, tt.wantDeleted)
			}
		})
	}
}
