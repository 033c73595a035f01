package runtimemanager

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// stamp is the rotated name suffix of the n-th second of the test clock.
func stamp(n int) string {
	return "." + time.Date(2026, 1, 2, 3, 4, n, 0, time.UTC).Format(rotatedTimeFormat)
}

// reopenBy is a runtime's answer to ReopenContainerLog.
type reopenBy int

const (
	reopenCreates        reopenBy = iota // the runtime makes a new, empty file
	reopenStopped                        // the container stopped: ErrRejected
	reopenGone                           // the container is gone: ErrNotFound
	reopenUncertain                      // the plugin died before it did anything
	reopenUncertainAfter                 // the plugin made the file, then its answer was lost
)

func (b reopenBy) reopen(path string, calls *int) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		switch b {
		case reopenStopped:
			return fmt.Errorf("reopening the log: %w: container is not running", ErrRejected)
		case reopenGone:
			return fmt.Errorf("reopening the log: %w", ErrNotFound)
		case reopenUncertain:
			return fmt.Errorf("reopening the log: %w", ErrUncertain)
		}
		if err := os.WriteFile(path, nil, 0o640); err != nil {
			return err
		}
		if b == reopenUncertainAfter {
			return fmt.Errorf("reopening the log: %w", ErrUncertain)
		}
		return nil
	}
}

func TestLogRotatorRotate(t *testing.T) {
	const big = "0123456789abcdefghij\n" // 21 bytes > MaxBytes
	tests := []struct {
		name       string
		files      map[string]string // relative to the log, "" is the log itself
		maxFiles   int
		by         reopenBy
		wantFiles  []string // every file of the directory afterwards, by suffix
		wantCalls  int
		wantErr    error
		wantRotate bool
	}{
		{name: "small file stays", files: map[string]string{"": "short\n"}, maxFiles: 3,
			wantFiles: []string{""}},
		{name: "file at the limit stays", files: map[string]string{"": strings.Repeat("x", 20)}, maxFiles: 3,
			wantFiles: []string{""}},
		{name: "big file rotated", files: map[string]string{"": big}, maxFiles: 3,
			wantFiles: []string{"", stamp(9)}, wantCalls: 1, wantRotate: true},
		{name: "older rotated files compressed", files: map[string]string{"": big, stamp(1): big}, maxFiles: 3,
			wantFiles: []string{"", stamp(1) + ".gz", stamp(9)}, wantCalls: 1, wantRotate: true},
		{name: "oldest removed to keep max files", files: map[string]string{"": big, stamp(1) + ".gz": "z", stamp(2) + ".gz": "z", stamp(3): big}, maxFiles: 3,
			wantFiles: []string{"", stamp(3) + ".gz", stamp(9)}, wantCalls: 1, wantRotate: true},
		{name: "two files keep no older one", files: map[string]string{"": big, stamp(1): big}, maxFiles: 2,
			wantFiles: []string{"", stamp(9)}, wantCalls: 1, wantRotate: true},
		{name: "partial compression removed", files: map[string]string{"": big, stamp(1): big, stamp(1) + ".gz.tmp": "half"}, maxFiles: 3,
			wantFiles: []string{"", stamp(1) + ".gz", stamp(9)}, wantCalls: 1, wantRotate: true},
		{name: "finished compression completed", files: map[string]string{"": big, stamp(1): big, stamp(1) + ".gz": "z"}, maxFiles: 3,
			wantFiles: []string{"", stamp(1) + ".gz", stamp(9)}, wantCalls: 1, wantRotate: true},
		{name: "files not ours left alone", files: map[string]string{"": big, ".old": "x", ".20260102": "x"}, maxFiles: 2,
			wantFiles: []string{"", ".20260102", stamp(9), ".old"}, wantCalls: 1, wantRotate: true},
		{name: "stopped container keeps its file", files: map[string]string{"": big}, maxFiles: 3, by: reopenStopped,
			wantFiles: []string{""}, wantCalls: 1},
		{name: "removed container keeps its file", files: map[string]string{"": big}, maxFiles: 3, by: reopenGone,
			wantFiles: []string{""}, wantCalls: 1},
		{name: "failed reopen renames back", files: map[string]string{"": big}, maxFiles: 3, by: reopenUncertain,
			wantFiles: []string{""}, wantCalls: 1, wantErr: ErrUncertain},
		{name: "lost answer keeps the rotation", files: map[string]string{"": big}, maxFiles: 3, by: reopenUncertainAfter,
			wantFiles: []string{"", stamp(9)}, wantCalls: 1, wantErr: ErrUncertain, wantRotate: true},
		{name: "missing file asked for again", files: map[string]string{stamp(1): big}, maxFiles: 3,
			wantFiles: []string{"", stamp(1)}, wantCalls: 1},
		{name: "missing file of a stopped container", files: map[string]string{stamp(1): big}, maxFiles: 3, by: reopenStopped,
			wantFiles: []string{stamp(1)}, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "0.log")
			for suffix, body := range tt.files {
				if err := os.WriteFile(path+suffix, []byte(body), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "1.log"), []byte(big), 0o640); err != nil {
				t.Fatal(err) // another attempt's log: never touched
			}
			calls := 0
			r := logRotator{
				policy: LogRotation{MaxBytes: 20, MaxFiles: tt.maxFiles, Interval: time.Second},
				now:    func() time.Time { return time.Date(2026, 1, 2, 3, 4, 9, 0, time.UTC) },
				reopen: tt.by.reopen(path, &calls),
			}
			rotated, err := r.rotate(context.Background(), path)
			if !errorIs(err, tt.wantErr) {
				t.Errorf("rotate: got error %v; want %v", err, tt.wantErr)
			}
			if got := rotated != ""; got != tt.wantRotate {
				t.Errorf("rotate: got rotated %q; want a rotation: %t", rotated, tt.wantRotate)
			}
			if calls != tt.wantCalls {
				t.Errorf("reopen calls: got %d; want %d", calls, tt.wantCalls)
			}
			if got := logSuffixes(t, dir, "0.log"); !slices.Equal(got, tt.wantFiles) {
				t.Errorf("files: got %q; want %q", got, tt.wantFiles)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "1.log")); err != nil || string(b) != big {
				t.Errorf("1.log: got %q, %v; want it untouched", b, err)
			}
		})
	}
}

func errorIs(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}

// logSuffixes lists the files of dir named base or base.*, as their
// suffixes after base, sorted.
func logSuffixes(t *testing.T, dir, base string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if s, ok := strings.CutPrefix(e.Name(), base); ok && (s == "" || s[0] == '.') {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// TestCompressLog checks that a compressed log reads back as the original
// and keeps its mode.
func TestCompressLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log"+stamp(1))
	body := strings.Repeat("2026-01-02T03:04:05.000000000Z stdout F hello\n", 1000)
	if err := os.WriteFile(path, []byte(body), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := compressLog(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("uncompressed file: got %v; want it gone", err)
	}
	f, err := os.Open(path + ".gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if info, _ := f.Stat(); info.Mode().Perm() != 0o640 || info.Size() >= int64(len(body)) {
		t.Errorf("compressed file: mode %v size %d; want 0640 and smaller than %d", info.Mode().Perm(), info.Size(), len(body))
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || string(got) != body {
		t.Errorf("decompressed: %d bytes, %v; want the %d original bytes", len(got), err, len(body))
	}
}

func TestRemoveRotatedLogs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "0.log")
	for _, suffix := range []string{stamp(1) + ".gz", stamp(2), stamp(3) + ".gz.tmp", ".old"} {
		if err := os.WriteFile(path+suffix, []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "1.log"+stamp(1)), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := removeRotatedLogs(path); err != nil {
		t.Fatal(err)
	}
	if got, want := logSuffixes(t, dir, "0.log"), []string{".old"}; !slices.Equal(got, want) {
		t.Errorf("files of 0.log: got %q; want %q", got, want)
	}
	if got := logSuffixes(t, dir, "1.log"); len(got) != 1 {
		t.Errorf("files of 1.log: got %q; want its rotated file kept", got)
	}
	if err := removeRotatedLogs(filepath.Join(dir, "gone", "0.log")); err != nil {
		t.Errorf("logs of a removed directory: %v; want nil", err)
	}
}
