package main

import (
	"reflect"
	"testing"
	"testing/synctest"
	"time"
)

// TestWatcherReportsExitsFromTheEvent checks that a container's own exit
// is published from containerd's event, without a look-up and before CRI
// shows it; that ContainerStatus carries the event's exit until CRI does
// (then CRI's answer stands); and that a resync listing CRI meanwhile does
// not take the exit back.
func TestWatcherReportsExitsFromTheEvent(t *testing.T) {
	exit := func(id string, code int32, oom bool) []taskEvent {
		evs := []taskEvent{{topic: topicExited, id: id, exit: &exitFact{code: code, at: 7_000}}}
		if oom {
			evs = append([]taskEvent{{topic: topicOOM, id: id}}, evs...)
		}
		return evs
	}
	for _, tc := range []struct {
		name       string
		events     []taskEvent
		wantEvents []string
		wantReason string
		wantCode   int32
	}{
		{"exit 0", exit("c1", 0, false), []string{"exited c1@s1"}, reasonCompleted, 0},
		{"exit 3", exit("c1", 3, false), []string{"exited c1@s1"}, reasonError, 3},
		{"an OOM kill", exit("c1", 137, true), []string{"exited c1@s1"}, reasonOOMKilled, 137},
		{"exit, then the task's delete", append(exit("c1", 3, false), taskEvent{topic: topicExited, id: "c1"}), []string{"exited c1@s1"}, reasonError, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newFakeSource("s1=ready", "c1@s1=running")
				w, ch, stream := startWatcher(t, src)
				_ = received(t, ch)
				for _, ev := range tc.events {
					stream.events <- ev
				}
				if got := received(t, ch); !reflect.DeepEqual(got, tc.wantEvents) {
					t.Fatalf("events %q; want %q", got, tc.wantEvents)
				}
				src.mu.Lock()
				lookups := src.lookups
				src.mu.Unlock()
				if lookups != 0 {
					t.Errorf("%d look-ups; want none: the event tells all", lookups)
				}
				// CRI still shows the container running.
				c := w.withExit(Container{ID: "c1", State: ContainerRunning, StartedAt: 5})
				want := Container{ID: "c1", State: ContainerExited, StartedAt: 5, FinishedAt: 7_000, ExitCode: tc.wantCode, Reason: tc.wantReason}
				if !reflect.DeepEqual(c, want) {
					t.Errorf("status before CRI shows the exit: %+v; want %+v", c, want)
				}
				if got, _ := w.containers(ContainerFilter{ID: "c1"}); len(got) != 1 || got[0].State != ContainerExited {
					t.Errorf("served listing %+v; want c1 EXITED", got)
				}
				// A resync that lists CRI before it shows the exit keeps it.
				w.mu.Lock()
				run := w.run
				w.mu.Unlock()
				if err := w.relist(t.Context(), run, nil); err != nil {
					t.Fatal(err)
				}
				if got := received(t, ch); got != nil {
					t.Errorf("resync before CRI shows the exit: events %q; want none", got)
				}
				if got, _ := w.containers(ContainerFilter{ID: "c1"}); len(got) != 1 || got[0].State != ContainerExited {
					t.Errorf("served listing after the resync %+v; want c1 still EXITED", got)
				}
				// Once CRI shows the exit, its answer stands.
				cri := Container{ID: "c1", State: ContainerExited, FinishedAt: 7_001, ExitCode: tc.wantCode, Reason: "from CRI"}
				if got := w.withExit(cri); !reflect.DeepEqual(got, cri) {
					t.Errorf("status once CRI shows the exit: %+v; want CRI's %+v", got, cri)
				}
				time.Sleep(time.Second)
			})
		})
	}
}

// TestWatcherLeavesAFailedStartsExitToCRI checks that the task exit of a
// container the snapshot knows only as created (a start that failed or was
// cut short: CRI reports it as exit 128, StartError, once it has cleaned
// up) is not reported from the event but once CRI shows it.
func TestWatcherLeavesAFailedStartsExitToCRI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready", "c1@s1=created")
		w, ch, stream := startWatcher(t, src)
		_ = received(t, ch)
		src.set(2, "s1=ready", "c1@s1=exited")
		stream.events <- taskEvent{topic: topicExited, id: "c1", exit: &exitFact{code: 137, at: 9}}
		time.Sleep(time.Second) // fake time: the look-ups' back-off passes
		if got, want := received(t, ch), []string{"exited c1@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("events %q; want %q once CRI shows it", got, want)
		}
		src.mu.Lock()
		lookups := src.lookups
		src.mu.Unlock()
		if lookups == 0 {
			t.Error("no look-up: the exit was taken from the event")
		}
		if c := w.withExit(Container{ID: "c1", State: ContainerCreated}); c.State != ContainerCreated {
			t.Errorf("status %+v; want CRI's own answer, no exit from the event", c)
		}
	})
}

// TestWatcherLeavesItsOwnStopsExitsToTheCall checks that the exit of a
// container the plugin is stopping is not reported from the event: the
// stop reports it once CRI has it.
func TestWatcherLeavesItsOwnStopsExitsToTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready", "c1@s1=running")
		w, ch, stream := startWatcher(t, src)
		_ = received(t, ch)
		end := w.begin("c1")
		stream.events <- taskEvent{topic: topicExited, id: "c1", exit: &exitFact{code: 143, at: 9}}
		if got := received(t, ch); got != nil {
			t.Fatalf("during the plugin's own stop: events %q; want none yet", got)
		}
		w.note(change{kind: containerExited, containerID: "c1"})
		end()
		if got, want := received(t, ch), []string{"exited c1@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("after the stop: events %q; want %q", got, want)
		}
		if c := w.withExit(Container{ID: "c1", State: ContainerRunning}); c.State != ContainerRunning {
			t.Errorf("status %+v; want CRI's own answer, no exit from the event", c)
		}
	})
}
