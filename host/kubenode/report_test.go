package kubenode

import (
	"testing"
	"time"
)

// TestReportPolicy walks the post decisions of a 5 min frequency with the
// random spread fixed at +¼ of it: the first post and a change are due at
// once; the period after them is spread; later periods are exact.
func TestReportPolicy(t *testing.T) {
	const f = 5 * time.Minute
	p := reportPolicy{frequency: f, rand: func() float64 { return 0.75 }}
	t0 := time.Unix(0, 0)
	steps := []struct {
		at      time.Duration
		changed bool
		due     bool
		post    bool // record a post when due
	}{
		{0, false, true, true}, // the first post
		{10 * time.Second, false, false, false},
		{f, false, false, false},     // spread: f + f/4
		{f + f/4, false, true, true}, // the spread period ends
		{f + f/4 + f - time.Second, false, false, false},
		{2*f + f/4, false, true, true},                 // exact from now on
		{2*f + f/4 + time.Second, true, true, true},    // a change posts at once
		{3*f + f/4 + time.Second, false, false, false}, // and spreads again
		{3*f + f/2 + time.Second, false, true, false},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		if got := p.due(now, s.changed); got != s.due {
			t.Fatalf("step %d at %v (changed %v): due = %v; want %v", i, s.at, s.changed, got, s.due)
		}
		if s.post {
			p.posted(now, s.changed)
		}
	}
	p.forget()
	if !p.due(t0.Add(3*f+f/2+2*time.Second), false) {
		t.Error("after forget, a post is not due")
	}
}
