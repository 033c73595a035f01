package stats

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 20; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{50, 10 * time.Millisecond}, {75, 15 * time.Millisecond}, {90, 18 * time.Millisecond}, {99, 20 * time.Millisecond}, {100, 20 * time.Millisecond}} {
		if got := Percentile(ds, tc.q); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := Percentile([]time.Duration{7}, 50); got != 7 {
		t.Errorf("p50 of one = %v", got)
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("p50 of none = %v", got)
	}
}

func TestSummarizeSortsACopy(t *testing.T) {
	ds := []time.Duration{3 * time.Millisecond, 1 * time.Millisecond, 2 * time.Millisecond}
	s := Summarize(ds)
	if s.N != 3 || s.P50 != 2*time.Millisecond || s.Max != 3*time.Millisecond {
		t.Errorf("Summarize = %+v", s)
	}
	if ds[0] != 3*time.Millisecond {
		t.Errorf("Summarize sorted its argument: %v", ds)
	}
	if got := s.Quartet(); got != "2 / 3 / 3 / 3" {
		t.Errorf("Quartet = %q", got)
	}
}
