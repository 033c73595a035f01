package kubenode

import "time"

// The back-off of failed API calls: 200 ms doubling to 7 s, as the
// kubelet's registration and lease retries.
const (
	initialBackoff = 200 * time.Millisecond
	maxBackoff     = 7 * time.Second
	// remindEvery is how often a heartbeat that keeps failing is logged
	// again.
	remindEvery = time.Minute
)

// heartbeat keeps one heartbeat's (the Lease's or the status's) record of
// successes and failures and says when to try next: after a success, one
// interval (plus a jitter of up to jitter of it); after a failure, a
// back-off that doubles from initialBackoff to maxBackoff, never past the
// interval.
type heartbeat struct {
	interval time.Duration
	jitter   float64        // share of interval added at random
	rand     func() float64 // in [0, 1)

	failures     int       // consecutive failures
	failingSince time.Time // the first of them
	backoff      time.Duration
	reminded     time.Time // the last log line about the failures
}

// outcome is what a heartbeat's result means for the operator.
type outcome struct {
	next time.Duration // wait before the next try
	// started is true on the first failure after a success (or start);
	// remind is true on a later failure once every remindEvery.
	started, remind bool
	// recovered is true on a success after failures; failures and since
	// say how many there were, from when.
	recovered bool
	failures  int
	since     time.Time
}

func (h *heartbeat) succeeded() outcome {
	o := outcome{next: h.interval + time.Duration(h.jitter*h.rand()*float64(h.interval))}
	if h.failures > 0 {
		o.recovered, o.failures, o.since = true, h.failures, h.failingSince
	}
	h.failures, h.failingSince, h.backoff = 0, time.Time{}, 0
	return o
}

func (h *heartbeat) failed(now time.Time) outcome {
	h.failures++
	o := outcome{failures: h.failures}
	if h.failures == 1 {
		h.failingSince, h.reminded, o.started = now, now, true
		h.backoff = initialBackoff
	} else {
		h.backoff = min(2*h.backoff, maxBackoff)
		if now.Sub(h.reminded) >= remindEvery {
			h.reminded, o.remind = now, true
		}
	}
	o.since = h.failingSince
	o.next = min(h.backoff, h.interval)
	return o
}
