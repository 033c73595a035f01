package supervisor

import "time"

// BackoffPolicy is the restart back-off of a plugin: after the n-th
// consecutive failure the supervisor waits Initial·2^(n-1), at most Max. A
// plugin that ran for ResetAfter or longer before it exited starts again
// from Initial.
type BackoffPolicy struct {
	Initial    time.Duration
	Max        time.Duration
	ResetAfter time.Duration
}

func (p BackoffPolicy) withDefaults() BackoffPolicy {
	if p.Initial <= 0 {
		p.Initial = DefaultBackoff.Initial
	}
	if p.Max <= 0 {
		p.Max = DefaultBackoff.Max
	}
	if p.Max < p.Initial {
		p.Max = p.Initial
	}
	if p.ResetAfter <= 0 {
		p.ResetAfter = DefaultBackoff.ResetAfter
	}
	return p
}

// Delay is the wait after the given number of consecutive failures
// (failures < 1 counts as 1).
func (p BackoffPolicy) Delay(failures int) time.Duration {
	d := p.Initial
	for i := 1; i < failures; i++ {
		if d >= p.Max/2 {
			return p.Max
		}
		d *= 2
	}
	return min(d, p.Max)
}

// backoff counts consecutive failures of one plugin.
type backoff struct {
	policy   BackoffPolicy
	failures int
}

// failed records a failure of an instance that ran healthy for ranFor (zero
// for a launch that failed) and returns how long to wait before the next
// launch.
func (b *backoff) failed(ranFor time.Duration) time.Duration {
	if ranFor >= b.policy.ResetAfter {
		b.failures = 0
	}
	b.failures++
	return b.policy.Delay(b.failures)
}
