package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type retryErr struct{ after time.Duration }

func (e retryErr) Error() string             { return "back-off " + e.after.String() }
func (e retryErr) RetryAfter() time.Duration { return e.after }

func TestSyncErrorRequeueDelay(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want time.Duration
	}{
		{"success waits the resync interval", nil, DefaultResyncInterval},
		{"plain error waits the back-off period", errors.New("boom"), DefaultBackOffPeriod},
		{"network not ready retries soon", fmt.Errorf("sync: %w", ErrNetworkNotReady), networkBackOffPeriod},
		{"crash back-off retries when it ends", fmt.Errorf("sync: %w", retryErr{40 * time.Second}), 40 * time.Second},
		{"a negative retry is now", retryErr{-time.Second}, 0},
		// A16: a sync cut short by termination did not fail.
		{"a cancelled sync is not backed off", fmt.Errorf("sync: %w", context.Canceled), DefaultResyncInterval},
		{"a start refused for termination is not backed off", fmt.Errorf("sync: %w", ErrTerminationRequested), DefaultResyncInterval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, clock := newCore()
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "1", Name: "p", Namespace: "ns"}}
			p.UpdatePod(UpdatePodOptions{UpdateType: UpdateCreate, Pod: pod})
			w, outcome := p.Begin("1")
			if outcome == BeginExit || w.WorkType != WorkSync {
				t.Fatalf("Begin = %+v, %v; want sync work", w, outcome)
			}
			p.Complete(w, WorkResult{Err: tc.err})
			due, ok := p.Queue().Due("1")
			if !ok || due.Sub(clock.now) != tc.want {
				t.Errorf("requeued in %v (queued %v); want %v", due.Sub(clock.now), ok, tc.want)
			}
		})
	}
}
