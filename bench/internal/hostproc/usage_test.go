package hostproc

import (
	"testing"
	"time"
)

func TestParseCPUTime(t *testing.T) {
	// Fields after the command: state ppid pgrp session tty tpgid flags
	// minflt cminflt majflt cmajflt utime stime …
	tests := []struct {
		name, stat string
		want       time.Duration
		wantErr    bool
	}{
		{"plain", "42 (podhost) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0", 3 * time.Second, false},
		{"spaces and parens in the command", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0", 70 * time.Millisecond, false},
		{"too few fields", "7 (x) R 1 7", 0, true},
		{"no command", "garbage", 0, true},
		{"utime not a number", "7 (x) S 1 7 7 0 -1 0 0 0 0 0 u 4 0", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPUTime(tt.stat)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseCPUTime = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseStatusMiB(t *testing.T) {
	const status = "Name:\tpodhost\nVmPeak:\t 9000 kB\nVmRSS:\t   38912 kB\nRssAnon:\t    1536 kB\nRssFile:\t 37376 kB\n"
	tests := []struct {
		name, status, field string
		want                float64
	}{
		{"VmRSS", status, "VmRSS", 38},
		{"RssAnon", status, "RssAnon", 1.5},
		{"a field's prefix is not the field", status, "Rss", 0},
		{"absent (a kernel thread)", "Name:\tkthreadd\nState:\tS\n", "VmRSS", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseStatusMiB(tt.status, tt.field); got != tt.want {
				t.Fatalf("parseStatusMiB(%s) = %v, want %v", tt.field, got, tt.want)
			}
		})
	}
}
