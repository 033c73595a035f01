package kubenode

import (
	"testing"
	"time"
)

// TestHeartbeat scripts the lease's renewals: an interval (and its
// jitter) after a success; after failures a back-off that doubles to 7 s
// and never passes the interval; the first failure and then one a minute
// are logged; the success after failures reports how many, since when.
func TestHeartbeat(t *testing.T) {
	type step struct {
		ok        bool
		at        time.Duration
		next      time.Duration
		started   bool
		remind    bool
		recovered bool
		failures  int
		since     time.Duration
	}
	tests := []struct {
		name     string
		interval time.Duration
		steps    []step
	}{
		{"renewals with jitter", 10 * time.Second, []step{
			{ok: true, at: 0, next: 10*time.Second + 200*time.Millisecond},
			{ok: true, at: 10 * time.Second, next: 10*time.Second + 200*time.Millisecond},
		}},
		{"back-off to 7 s and recovery", 10 * time.Second, []step{
			{ok: true, at: 0, next: 10200 * time.Millisecond},
			{at: 10 * time.Second, next: 200 * time.Millisecond, started: true, failures: 1, since: 10 * time.Second},
			{at: 11 * time.Second, next: 400 * time.Millisecond, failures: 2, since: 10 * time.Second},
			{at: 12 * time.Second, next: 800 * time.Millisecond, failures: 3, since: 10 * time.Second},
			{at: 13 * time.Second, next: 1600 * time.Millisecond, failures: 4, since: 10 * time.Second},
			{at: 15 * time.Second, next: 3200 * time.Millisecond, failures: 5, since: 10 * time.Second},
			{at: 19 * time.Second, next: 6400 * time.Millisecond, failures: 6, since: 10 * time.Second},
			{at: 26 * time.Second, next: 7 * time.Second, failures: 7, since: 10 * time.Second},
			{at: 70 * time.Second, next: 7 * time.Second, remind: true, failures: 8, since: 10 * time.Second},
			{at: 77 * time.Second, next: 7 * time.Second, failures: 9, since: 10 * time.Second},
			{ok: true, at: 80 * time.Second, next: 10200 * time.Millisecond, recovered: true, failures: 9, since: 10 * time.Second},
			{at: 90 * time.Second, next: 200 * time.Millisecond, started: true, failures: 1, since: 90 * time.Second},
		}},
		{"back-off within a short interval", time.Second, []step{
			{at: 0, next: 200 * time.Millisecond, started: true, failures: 1},
			{at: time.Second, next: 400 * time.Millisecond, failures: 2},
			{at: 2 * time.Second, next: 800 * time.Millisecond, failures: 3},
			{at: 3 * time.Second, next: time.Second, failures: 4},
			{at: 4 * time.Second, next: time.Second, failures: 5},
		}},
	}
	t0 := time.Unix(100, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := heartbeat{interval: tt.interval, jitter: 0.04, rand: func() float64 { return 0.5 }}
			if tt.interval == time.Second {
				h.jitter = 0
			}
			for i, s := range tt.steps {
				var o outcome
				if s.ok {
					o = h.succeeded()
				} else {
					o = h.failed(t0.Add(s.at))
				}
				want := outcome{next: s.next, started: s.started, remind: s.remind, recovered: s.recovered, failures: s.failures}
				if s.failures > 0 {
					want.since = t0.Add(s.since)
				}
				if o != want {
					t.Fatalf("step %d: %+v; want %+v", i, o, want)
				}
			}
		})
	}
}
