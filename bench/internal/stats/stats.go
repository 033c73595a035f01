// Package stats holds the percentile and formatting helpers shared by the
// benchmark programs under bench/; only packages under bench/ import it.
package stats

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Percentile returns the nearest-rank q-th percentile of sorted durations,
// or 0 when there are none.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q/100*float64(len(sorted)) + 0.999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Summary is the distribution of one measure.
type Summary struct {
	N                       int
	P50, P75, P90, P99, Max time.Duration
}

// Summarize sorts a copy of ds and returns its percentiles.
func Summarize(ds []time.Duration) Summary {
	s := slices.Clone(ds)
	slices.Sort(s)
	out := Summary{N: len(s),
		P50: Percentile(s, 50), P75: Percentile(s, 75), P90: Percentile(s, 90), P99: Percentile(s, 99)}
	if len(s) > 0 {
		out.Max = s[len(s)-1]
	}
	return out
}

// Quartet formats p50 / p75 / p90 / p99 in milliseconds.
func (s Summary) Quartet() string {
	return fmt.Sprintf("%s / %s / %s / %s", MSNum(s.P50), MSNum(s.P75), MSNum(s.P90), MSNum(s.P99))
}

// MS formats d as whole milliseconds with the unit: "123 ms".
func MS(d time.Duration) string {
	return MSNum(d) + " ms"
}

// MSNum formats d as whole milliseconds without the unit.
func MSNum(d time.Duration) string {
	return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond))
}

// Loadavg is the machine's 1-minute load average, or "?"; the programs
// print it with every result.
func Loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
