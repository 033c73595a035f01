package kubenode

import "time"

// reportPolicy decides when the status is posted: at once when it
// changed, else when ReportFrequency passed since the last post. After a
// change, and for the first post, the next periodic post is moved by a
// random part of the frequency (−½ to +½ of it), so that nodes that
// started or changed together spread their periodic posts; later periods
// are exact, as the kubelet does.
type reportPolicy struct {
	frequency time.Duration
	rand      func() float64 // in [0, 1)

	last  time.Time     // the last post; zero before the first
	delay time.Duration // the spread of the current period
}

// due reports whether a status that changed (or not) must be posted now.
func (p *reportPolicy) due(now time.Time, changed bool) bool {
	return changed || p.last.IsZero() || now.Sub(p.last) >= p.frequency+p.delay
}

// posted records a successful post at now of a status that changed (or
// not).
func (p *reportPolicy) posted(now time.Time, changed bool) {
	if changed || p.last.IsZero() {
		p.delay = time.Duration(float64(p.frequency) * (p.rand() - 0.5))
	} else {
		p.delay = 0
	}
	p.last = now
}

// forget makes the next check post, as for a node registered anew.
func (p *reportPolicy) forget() { p.last = time.Time{} }
