package main

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
		if got := percentile(ds, tc.q); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := percentile([]time.Duration{7}, 50); got != 7 {
		t.Errorf("p50 of one = %v", got)
	}
}
