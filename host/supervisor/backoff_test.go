package supervisor

import (
	"testing"
	"time"
)

func TestBackoffPolicyDelay(t *testing.T) {
	t.Parallel()
	p := DefaultBackoff
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{0, time.Second},
		{1, time.Second},
		{2, 2 * time.Second},
		{3, 4 * time.Second},
		{4, 8 * time.Second},
		{5, 16 * time.Second},
		{6, 32 * time.Second},
		{7, time.Minute},
		{8, time.Minute},
		{1000, time.Minute},
	}
	for _, tc := range tests {
		if got := p.Delay(tc.failures); got != tc.want {
			t.Errorf("Delay(%d) = %v, want %v", tc.failures, got, tc.want)
		}
	}
}

func TestBackoffPolicyDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   BackoffPolicy
		want BackoffPolicy
	}{
		{"zero", BackoffPolicy{}, DefaultBackoff},
		{"initial only", BackoffPolicy{Initial: time.Millisecond}, BackoffPolicy{Initial: time.Millisecond, Max: time.Minute, ResetAfter: 10 * time.Minute}},
		{"max below initial", BackoffPolicy{Initial: time.Hour, Max: time.Second}, BackoffPolicy{Initial: time.Hour, Max: time.Hour, ResetAfter: 10 * time.Minute}},
	}
	for _, tc := range tests {
		if got := tc.in.withDefaults(); got != tc.want {
			t.Errorf("%s: withDefaults() = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestBackoffResetsAfterHealthyRun(t *testing.T) {
	t.Parallel()
	b := backoff{policy: BackoffPolicy{Initial: time.Second, Max: time.Minute, ResetAfter: 10 * time.Minute}}
	steps := []struct {
		ranFor time.Duration
		want   time.Duration
	}{
		{0, time.Second},                // failed launch
		{0, 2 * time.Second},            // failed again
		{time.Minute, 4 * time.Second},  // ran a minute: still a crash loop
		{10 * time.Minute, time.Second}, // ran long enough: start over
		{0, 2 * time.Second},
		{time.Hour, time.Second},
	}
	for i, s := range steps {
		if got := b.failed(s.ranFor); got != s.want {
			t.Errorf("step %d: failed(%v) = %v, want %v", i, s.ranFor, got, s.want)
		}
	}
}
