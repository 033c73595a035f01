package events

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// tick is a clock that advances one second per reading.
func tick() func() time.Time {
	var mu sync.Mutex
	now := t0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

func pod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + k8stypes.UID(name)}}
}

type rec struct {
	pod, typ, reason, msg string
}

func TestDeduplication(t *testing.T) {
	tests := []struct {
		name string
		in   []rec
		// want is "pod reason count" per entry, oldest first.
		want []string
	}{
		{"single", []rec{{"a", Normal, ReasonPulled, "m"}}, []string{"a Pulled 1"}},
		{"identical consecutive fold",
			[]rec{{"a", Warning, ReasonBackOff, "m"}, {"a", Warning, ReasonBackOff, "m"}, {"a", Warning, ReasonBackOff, "m"}},
			[]string{"a BackOff 3"}},
		{"other message does not fold",
			[]rec{{"a", Warning, ReasonBackOff, "m1"}, {"a", Warning, ReasonBackOff, "m2"}},
			[]string{"a BackOff 1", "a BackOff 1"}},
		{"other type does not fold",
			[]rec{{"a", Normal, ReasonFailed, "m"}, {"a", Warning, ReasonFailed, "m"}},
			[]string{"a Failed 1", "a Failed 1"}},
		{"interleaved pods still fold per object",
			[]rec{{"a", Warning, ReasonBackOff, "m"}, {"b", Warning, ReasonBackOff, "m"}, {"a", Warning, ReasonBackOff, "m"}, {"b", Warning, ReasonBackOff, "m"}},
			[]string{"a BackOff 2", "b BackOff 2"}},
		{"not consecutive for the object",
			[]rec{{"a", Warning, ReasonBackOff, "m"}, {"a", Normal, ReasonStarted, "m"}, {"a", Warning, ReasonBackOff, "m"}},
			[]string{"a BackOff 1", "a Started 1", "a BackOff 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(Options{Now: tick()})
			for _, in := range tt.in {
				r.Event(pod(in.pod), in.typ, in.reason, in.msg)
			}
			var got []string
			for _, e := range r.List(Filter{}) {
				got = append(got, fmt.Sprintf("%s %s %d", e.Object.Name, e.Reason, e.Count))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRepeatKeepsFirstTimeAndMovesLastTime(t *testing.T) {
	r := New(Options{Now: tick()})
	r.Event(pod("a"), Warning, ReasonBackOff, "m")
	e := r.Record(Object{Kind: KindPod, Namespace: "ns", Name: "a", UID: "uid-a"}, Warning, ReasonBackOff, "m")
	if e.Count != 2 || !e.FirstTime.Equal(t0.Add(time.Second)) || !e.LastTime.Equal(t0.Add(2*time.Second)) || e.Seq != 1 {
		t.Fatalf("repeat: %+v", e)
	}
}

func TestCapacityBound(t *testing.T) {
	tests := []struct{ capacity, records, wantLen int }{
		{1, 5, 1}, {3, 2, 2}, {3, 3, 3}, {3, 10, 3}, {0, DefaultCapacity + 50, DefaultCapacity},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("cap %d, %d records", tt.capacity, tt.records), func(t *testing.T) {
			r := New(Options{Capacity: tt.capacity, Now: tick()})
			for i := range tt.records {
				r.Event(pod(fmt.Sprint("p", i)), Normal, ReasonStarted, "m")
			}
			list := r.List(Filter{})
			if r.Len() != tt.wantLen || len(list) != tt.wantLen {
				t.Fatalf("Len %d, List %d; want %d", r.Len(), len(list), tt.wantLen)
			}
			// The newest are kept, in order.
			for i, e := range list {
				if want := uint64(tt.records - tt.wantLen + i + 1); e.Seq != want {
					t.Fatalf("entry %d has seq %d, want %d", i, e.Seq, want)
				}
			}
		})
	}
}

func TestEvictedEntryIsNotFoldedInto(t *testing.T) {
	r := New(Options{Capacity: 2, Now: tick()})
	r.Event(pod("a"), Warning, ReasonBackOff, "m")
	r.Event(pod("b"), Normal, ReasonStarted, "m")
	r.Event(pod("c"), Normal, ReasonStarted, "m") // evicts a's entry
	e := r.Record(Object{Kind: KindPod, Namespace: "ns", Name: "a", UID: "uid-a"}, Warning, ReasonBackOff, "m")
	if e.Count != 1 || e.Seq != 4 {
		t.Fatalf("after eviction: %+v", e)
	}
}

func TestListFilter(t *testing.T) {
	r := New(Options{Now: tick()})
	r.Event(pod("a"), Normal, ReasonPulled, "m")                                         // t0+1
	r.Event(pod("b"), Normal, ReasonPulled, "m")                                         // t0+2
	r.Record(Object{Kind: KindPlugin, Name: "csi"}, Warning, ReasonPluginRestarted, "m") // t0+3
	r.Event(nil, Warning, ReasonDatabaseRecovered, "m")                                  // t0+4
	r.Event(pod("a"), Normal, ReasonPulled, "m")                                         // folds, LastTime t0+5
	tests := []struct {
		name string
		f    Filter
		want string
	}{
		{"all", Filter{}, "[a b csi ]"},
		{"kind pod", Filter{Kind: KindPod}, "[a b]"},
		{"by name", Filter{Kind: KindPod, Namespace: "ns", Name: "b"}, "[b]"},
		{"by uid", Filter{UID: "uid-a"}, "[a]"},
		{"plugins", Filter{Kind: KindPlugin}, "[csi]"},
		{"node", Filter{Kind: KindNode}, "[]"},
		{"since uses last time", Filter{Since: t0.Add(3 * time.Second)}, "[a csi ]"},
		{"since the future", Filter{Since: t0.Add(time.Hour)}, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, e := range r.List(tt.f) {
				names = append(names, e.Object.Name)
			}
			if got := fmt.Sprint(names); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestWatch(t *testing.T) {
	r := New(Options{Now: tick()})
	r.Event(pod("before"), Normal, ReasonPulled, "m")
	ctx, cancel := context.WithCancel(context.Background())
	ch := r.Watch(ctx)
	r.Event(pod("a"), Normal, ReasonPulled, "m")
	r.Event(pod("a"), Normal, ReasonPulled, "m")
	for _, wantCount := range []int{1, 2} {
		e := <-ch
		if e.Object.Name != "a" || e.Count != wantCount || e.Seq != 2 {
			t.Fatalf("watched %+v, want a with count %d", e, wantCount)
		}
	}
	cancel()
	for range ch {
		// Drain until closed; a test hang here means Watch never closes.
	}
	r.Event(pod("after"), Normal, ReasonPulled, "m") // no send on a closed channel
}

func TestSlowWatcherLosesEventsAndNeverBlocks(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := New(Options{WatchBuffer: 4, Now: tick(), Registry: reg})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := r.Watch(ctx) // never read until the end
	for i := range 10 {
		r.Event(pod(fmt.Sprint("p", i)), Normal, ReasonStarted, "m")
	}
	if got := counterValue(t, reg, DroppedMetric); got != 6 {
		t.Fatalf("%s = %v, want 6", DroppedMetric, got)
	}
	for i := range 4 {
		if e := <-ch; e.Object.Name != fmt.Sprint("p", i) {
			t.Fatalf("buffered event %d is %s", i, e.Object.Name)
		}
	}
	if r.Len() != 10 {
		t.Fatalf("the ring lost events: %d", r.Len())
	}
}

func TestConcurrentRecordersAndReaders(t *testing.T) {
	r := New(Options{Capacity: 64, WatchBuffer: 8})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 500 {
				r.Event(pod(fmt.Sprint("p", w)), Normal, ReasonStarted, fmt.Sprint(i%3))
				r.Record(Object{Kind: KindPlugin, Name: "csi"}, Warning, ReasonPluginBackOff, "m")
			}
		})
	}
	var readers sync.WaitGroup
	for range 2 {
		ch := r.Watch(ctx)
		readers.Go(func() {
			for range ch {
			}
		})
	}
	readers.Go(func() {
		for ctx.Err() == nil {
			_ = r.List(Filter{Kind: KindPod})
			_ = r.Len()
		}
	})
	wg.Wait()
	cancel()
	readers.Wait()
	if r.Len() > 64 {
		t.Fatalf("ring holds %d > capacity", r.Len())
	}
	var plugin int
	for _, e := range r.List(Filter{Kind: KindPlugin}) {
		plugin += e.Count
	}
	if plugin == 0 {
		t.Fatal("no plugin events kept")
	}
}

// counterValue gathers reg and returns the value of the named counter; it
// fails the test when reg has no such counter.
func counterValue(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 && f.GetMetric()[0].GetCounter() != nil {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s among %d metric families", name, len(families))
	return 0
}

func TestForwardPods(t *testing.T) {
	r := New(Options{})
	var got []string
	r.ForwardPods(func(pod *v1.Pod, eventType, reason, message string) {
		got = append(got, pod.Name+" "+eventType+" "+reason+" "+message)
	})
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}}
	r.Event(pod, "Warning", "BackOff", "back-off")
	r.Event(nil, "Normal", "Starting", "node")
	r.ForwardPods(nil)
	r.Event(pod, "Normal", "Started", "after")
	if len(got) != 1 || got[0] != "p Warning BackOff back-off" {
		t.Fatalf("forwarded %q; want the pod's event before the stop only", got)
	}
	if n := len(r.List(Filter{})); n != 3 {
		t.Fatalf("the ring holds %d events; want all 3", n)
	}
}
