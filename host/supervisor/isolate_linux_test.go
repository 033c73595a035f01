package supervisor

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

// The plugin's parent-death signal follows the thread that forked it. Go
// ends the thread of a goroutine that returns while locked to it; many such
// goroutines, on whatever threads the host has, must not take the plugin
// with them.
func TestPluginSurvivesEndedHostThreads(t *testing.T) {
	h := newTestHost(t, Options{Backoff: BackoffPolicy{Initial: time.Hour}})
	if err := h.Start(t.Context(), []PluginSpec{testSpec(t, "vol", behaveOK)}); err != nil {
		t.Fatal(err)
	}
	pid := h.status(t, "vol").PID
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		tids []int
	)
	for range 64 {
		wg.Go(func() {
			runtime.LockOSThread()
			mu.Lock()
			tids = append(tids, syscall.Gettid())
			mu.Unlock()
			// Returning locked ends this OS thread.
		})
	}
	wg.Wait()
	waitFor(t, 10*time.Second, "the locked threads to end", func() bool {
		for _, tid := range tids {
			if tid == os.Getpid() {
				continue // the main thread never ends: Go wedges it instead
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil {
				return false
			}
		}
		return true
	})
	if !running(pid) {
		t.Fatalf("plugin process %d ended with a host thread", pid)
	}
	id, _ := h.Identity("vol")
	if _, err := id.Probe(t.Context(), &pluginv1.ProbeRequest{}); err != nil {
		t.Fatalf("probe after host threads ended: %v", err)
	}
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
