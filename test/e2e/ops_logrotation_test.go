package e2e

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestContainerLogRotation runs a container that writes 50 MiB to stdout
// through a host whose containerLogMaxSize is 4Mi and containerLogMaxFiles
// 4: the container's log files never take more than the configured 16 MiB
// on disk, older files are gzipped, the oldest removed, `podhost logs`
// reads the file being written, which containerd reopened, and `podhost
// logs --follow` follows the output from file to file.
func TestContainerLogRotation(t *testing.T) {
	const (
		maxSize  = 4 << 20
		maxFiles = 4
		limit    = maxSize * maxFiles
		written  = 50 << 20
	)
	h := startPodHostWith(t, fmt.Sprintf("containerLogMaxSize: 4Mi\ncontainerLogMaxFiles: %d\ncontainerLogMonitorInterval: 200ms\n", maxFiles))
	ctx := t.Context()

	// 50 bursts of 1 MiB of output (1024 lines of 1 KiB), one every 0.3 s
	// or so, then a marker; the container stays running.
	h.apply(busyPod("chatty", v1.RestartPolicyNever, sh("main",
		`i=0; while [ $i -lt 50 ]; do head -c 1048576 /dev/zero | tr '\0' x | fold -w 1023; i=$((i+1)); sleep 0.3; done; echo all-written; exec sleep 3600`)))
	pod := h.waitPod("chatty", 60*time.Second, "running", running)
	dir := filepath.Join(h.root, "pods", "default_chatty_"+string(pod.UID), "main")

	// `podhost logs --follow` from now on goes from file to file.
	followCtx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	followed := &tailWriter{}
	follow := exec.CommandContext(followCtx, h.bin, "logs", "default/chatty", "--follow", "--socket", filepath.Join(h.root, "host.sock"))
	follow.Stdout = followed
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	followDone := make(chan error, 1)
	go func() { followDone <- follow.Wait() }()

	// Sample the disk use of the container's logs until the marker shows.
	var (
		mu      sync.Mutex
		peak    int64
		peakLs  string
		stop    = make(chan struct{})
		sampled = make(chan struct{})
	)
	go func() {
		defer close(sampled)
		for {
			size, ls := logDirUsage(dir)
			mu.Lock()
			if size > peak {
				peak, peakLs = size, ls
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var out string
	poll(t, 3*time.Minute, func() bool {
		var err error
		out, err = h.hostCLI(ctx, "logs", "default/chatty")
		return err == nil && strings.Contains(out, "all-written")
	}, func() string {
		size, ls := logDirUsage(dir)
		return fmt.Sprintf("podhost logs: %d bytes, no all-written; %d bytes on disk:\n%s\n%s", len(out), size, ls, h.logTail())
	})
	close(stop)
	<-sampled
	poll(t, 60*time.Second, func() bool { return followed.saw("all-written\n") }, func() string {
		return fmt.Sprintf("podhost logs --follow: %d bytes, no all-written at the end", followed.size())
	})
	stopFollow()
	<-followDone
	// It started when the pod ran, before the first rotation or soon after,
	// so it read most of the 50 MiB: several files.
	if n := followed.size(); n < written/2 {
		t.Errorf("podhost logs --follow printed %d bytes; want most of the %d written, across rotations", n, written)
	}

	mu.Lock()
	defer mu.Unlock()
	t.Logf("peak disk use of the logs: %d bytes of %d allowed:\n%s", peak, limit, peakLs)
	if peak > limit {
		t.Errorf("logs took %d bytes on disk at their peak; want at most %d (%d files of %d):\n%s", peak, limit, maxFiles, maxSize, peakLs)
	}
	if peak == 0 {
		t.Fatalf("no log file seen in %s", dir)
	}

	// What is left: the file being written, one rotated file and gzipped
	// older ones, at most maxFiles in all.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var gz []string
	current, rotated := false, 0
	for _, e := range entries {
		switch name := e.Name(); {
		case name == "0.log":
			current = true
		case strings.HasPrefix(name, "0.log.") && strings.HasSuffix(name, ".gz"):
			gz = append(gz, filepath.Join(dir, name))
			rotated++
		case strings.HasPrefix(name, "0.log."):
			rotated++
		default:
			t.Errorf("unexpected file %s in %s", name, dir)
		}
	}
	if !current || rotated == 0 || len(gz) == 0 || 1+rotated > maxFiles {
		t.Errorf("files of %s: current %t, %d rotated (%d gzipped); want the current file, gzipped rotated ones, at most %d in all:\n%s",
			dir, current, rotated, len(gz), maxFiles, dirListing(dir))
	}
	for _, f := range gz {
		if first := firstGzipLine(t, f); !criLogLine.MatchString(first) {
			t.Errorf("first line of %s is not a CRI log line: %.80q", f, first)
		}
	}

	// podhost logs reads the file containerd reopened: it is small, starts
	// with a CRI line, and holds the last output.
	cur, err := os.ReadFile(filepath.Join(dir, "0.log"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(cur), "\n"); !criLogLine.MatchString(first) {
		t.Errorf("first line of the current log is not a CRI log line: %.80q", first)
	}
	if len(out) >= written/2 || len(out) > len(cur) {
		t.Errorf("podhost logs printed %d bytes; want at most the current file's %d", len(out), len(cur))
	}
}

// logDirUsage sums the sizes of the files in dir and lists them.
func logDirUsage(dir string) (int64, string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err.Error()
	}
	var total int64
	var b strings.Builder
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // renamed or removed since the listing
		}
		total += info.Size()
		fmt.Fprintf(&b, "  %s %d\n", e.Name(), info.Size())
	}
	return total, b.String()
}

func dirListing(dir string) string {
	_, ls := logDirUsage(dir)
	return ls
}

// tailWriter counts what it is written and keeps its end.
type tailWriter struct {
	mu   sync.Mutex
	n    int64
	tail []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n += int64(len(p))
	w.tail = append(w.tail, p...)
	if len(w.tail) > 256 {
		w.tail = w.tail[len(w.tail)-256:]
	}
	return len(p), nil
}

func (w *tailWriter) size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// saw reports whether the output so far ends with s.
func (w *tailWriter) saw(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.HasSuffix(string(w.tail), s)
}

// firstGzipLine returns the first line of a gzipped file.
func firstGzipLine(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, 4096))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return first
}
