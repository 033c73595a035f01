package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/test/crisetup"
)

// TestEventsWithContainerd follows containerd's events through the
// plugin's Events stream against a private containerd of its own (one
// subtest restarts it): exits, OOM kills, a containerd restart and a plugin
// restart. Every exit must come exactly once.
func TestEventsWithContainerd(t *testing.T) {
	c := crisetup.StartForTest(t)
	logs := t.TempDir()
	config := fmt.Sprintf(`{"endpoint":%q,"timeouts":{"runtime":"60s","image":"60s"}}`, c.Endpoint())
	pod := func(sb *runtimev1.SandboxConfig) {
		sb.HostNetwork = true
		sb.HostPid = true // the tests signal containers' processes by their PIDs
		sb.LogDirectory = filepath.Join(logs, sb.GetMetadata().GetUid())
	}

	t.Run("exit", func(t *testing.T) {
		rt := connect(t, config)
		events := follow(t, rt)
		sb, sbCfg := runSandbox(t, rt, "exit", pod)
		id := startContainer(t, rt, sb, sbCfg, &runtimev1.ContainerConfig{Command: []string{"sh", "-c", "sleep 0.2; exit 3"}})
		events.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, id)
		got := containerStatus(t, rt, id)
		if got.GetState() != runtimev1.ContainerState_CONTAINER_STATE_EXITED || got.GetExitCode() != 3 {
			t.Errorf("at the exit event: got %v exit code %d; want EXITED 3", got.GetState(), got.GetExitCode())
		}
		// What the plugin said at the event (maybe before CRI showed the
		// exit) is what CRI says once it shows it.
		cri := criExited(t, c, id)
		if got.GetFinishedAt() != cri.GetFinishedAt() || got.GetExitCode() != cri.GetExitCode() || got.GetReason() != cri.GetReason() {
			t.Errorf("at the exit event: finished %d, code %d, reason %q; CRI later: finished %d, code %d, reason %q",
				got.GetFinishedAt(), got.GetExitCode(), got.GetReason(), cri.GetFinishedAt(), cri.GetExitCode(), cri.GetReason())
		}
		removeAndCount(t, rt, events, id, 1)
	})

	t.Run("a probe's exec makes no exit", func(t *testing.T) {
		rt := connect(t, config)
		events := follow(t, rt)
		sb, sbCfg := runSandbox(t, rt, "exec", pod)
		id := startContainer(t, rt, sb, sbCfg, &runtimev1.ContainerConfig{Command: runningCommand})
		if _, err := rt.ExecSync(callCtx(t), &runtimev1.ExecSyncRequest{ContainerId: id, Cmd: []string{"sh", "-c", "exit 4"}, TimeoutSeconds: 30}); err != nil {
			t.Fatalf("ExecSync: %v", err)
		}
		stopContainer(t, rt, id)
		events.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, id)
		removeAndCount(t, rt, events, id, 1)
	})

	t.Run("OOM kill", func(t *testing.T) {
		for range 3 { // one OOM kill was once reported twice
			rt := connect(t, config)
			events := follow(t, rt)
			sb, sbCfg := runSandbox(t, rt, "oom", pod)
			// The shell builds a 64 MiB variable under a 16 MiB limit.
			id := startContainer(t, rt, sb, sbCfg, &runtimev1.ContainerConfig{
				Command:   []string{"sh", "-c", `x=$(head -c 67108864 /dev/zero | tr '\0' a); echo survived ${#x}`},
				Resources: &runtimev1.Resources{MemoryLimitInBytes: 16 << 20},
			})
			events.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, id)
			if c := containerStatus(t, rt, id); c.GetReason() != "OOMKilled" || c.GetExitCode() != 137 {
				t.Errorf("at the exit event: got reason %q exit code %d; want OOMKilled 137", c.GetReason(), c.GetExitCode())
			}
			if cri := criExited(t, c, id); cri.GetReason() != "OOMKilled" || cri.GetExitCode() != 137 {
				t.Errorf("CRI later: reason %q exit code %d; want OOMKilled 137", cri.GetReason(), cri.GetExitCode())
			}
			removeAndCount(t, rt, events, id, 1)
		}
	})

	t.Run("plugin restart", func(t *testing.T) {
		// The sandbox outlives both instances of the plugin.
		sb, sbCfg := runSandbox(t, connect(t, config), "plugin-restart", pod)
		first := testPlugin(t)
		if errs := first.Configure(t.Context(), []byte(config)); len(errs) > 0 {
			t.Fatalf("Configure: %v", errs)
		}
		rt := serve(t, first)
		follow(t, rt)
		w := t.TempDir()
		id := startContainer(t, rt, sb, sbCfg, signalled(w))
		_ = first.Runtime.(*server).rt.Close() // the plugin goes away
		terminate(t, w)                        // the container exits meanwhile

		rt = connect(t, config) // the plugin's next instance
		// The exit is in the listing the host's resync reads after a
		// plugin restart, not on a stream opened afterwards.
		waitExited(t, rt, id)
		events := follow(t, rt)
		other := startContainer(t, rt, sb, sbCfg, &runtimev1.ContainerConfig{Command: []string{"sh", "-c", "exit 0"}})
		events.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, other)
		removeAndCount(t, rt, events, id, 0)
		removeAndCount(t, rt, events, other, 1)
	})

	// Last: it restarts containerd under the other subtests' feet.
	t.Run("containerd restart", func(t *testing.T) {
		rt := connect(t, config)
		events := follow(t, rt)
		sb, sbCfg := runSandbox(t, rt, "containerd-restart", pod)
		w := t.TempDir()
		gone := startContainer(t, rt, sb, sbCfg, signalled(w))
		stays := startContainer(t, rt, sb, sbCfg, &runtimev1.ContainerConfig{Command: runningCommand})
		if err := c.Restart(callCtx(t), func() { terminate(t, w) }); err != nil {
			t.Fatalf("restart containerd: %v", err)
		}
		// The same stream goes on: the resync finds the exit.
		events.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, gone)
		stopContainer(t, rt, stays)
		events.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, stays)
		for _, id := range []string{gone, stays} {
			removeAndCount(t, rt, events, id, 1)
		}
	})
}

// criExited polls CRI itself, not the plugin, until it shows container id
// exited, and returns its status there.
func criExited(t *testing.T, c *crisetup.Containerd, id string) *criapi.ContainerStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := c.Runtime.ContainerStatus(callCtx(t), &criapi.ContainerStatusRequest{ContainerId: id})
		if err == nil && resp.GetStatus().GetState() == criapi.ContainerState_CONTAINER_EXITED {
			return resp.GetStatus()
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRI does not show %s exited: %v, %v", id, resp.GetStatus().GetState(), err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// signalled is a container that writes its PID to dir/pid and exits 5 on
// SIGTERM.
func signalled(dir string) *runtimev1.ContainerConfig {
	return &runtimev1.ContainerConfig{
		Command: []string{"sh", "-c", `echo $$ > /w/pid; trap "exit 5" TERM; while true; do sleep 0.1; done`},
		Mounts:  []*runtimev1.Mount{{ContainerPath: "/w", HostPath: dir}},
	}
}

// terminate sends SIGTERM to the process of a signalled container and
// waits until its shim has reaped it; containerd need not run.
func terminate(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	var pid int
	for {
		data, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err == nil {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s: %v", dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("signal %d: %v", pid, err)
	}
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not exit", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startContainer creates and starts a busybox container of cfg, which
// needs only its command and what else the test wants.
func startContainer(t *testing.T, rt runtimev1.RuntimeClient, sandbox string, sbCfg *runtimev1.SandboxConfig, cfg *runtimev1.ContainerConfig) string {
	t.Helper()
	name := fmt.Sprintf("c%d", time.Now().UnixNano())
	cfg.Metadata = &runtimev1.ContainerMetadata{Name: name}
	cfg.Image = localimages.BusyboxName
	cfg.LogPath = name + ".log"
	resp, err := rt.CreateContainer(callCtx(t), &runtimev1.CreateContainerRequest{SandboxId: sandbox, SandboxConfig: sbCfg, Config: cfg})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if _, err := rt.StartContainer(callCtx(t), &runtimev1.StartContainerRequest{ContainerId: resp.GetContainerId()}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	return resp.GetContainerId()
}

func containerStatus(t *testing.T, rt runtimev1.RuntimeClient, id string) *runtimev1.Container {
	t.Helper()
	resp, err := rt.ContainerStatus(callCtx(t), &runtimev1.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		t.Fatalf("ContainerStatus: %v", err)
	}
	return resp.GetContainer()
}

func stopContainer(t *testing.T, rt runtimev1.RuntimeClient, id string) {
	t.Helper()
	if _, err := rt.StopContainer(callCtx(t), &runtimev1.StopContainerRequest{ContainerId: id, TimeoutSeconds: 10}); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
}

func removeContainer(t *testing.T, rt runtimev1.RuntimeClient, id string) {
	t.Helper()
	if _, err := rt.RemoveContainer(callCtx(t), &runtimev1.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("RemoveContainer: %v", err)
	}
}

// eventLog records one Events stream.
type eventLog struct {
	mu     sync.Mutex
	events []*runtimev1.Event
	err    error
	added  chan struct{} // closed and replaced on each event
}

// follow opens an Events stream, waits for its header and records it
// until t ends.
func follow(t *testing.T, rt runtimev1.RuntimeClient) *eventLog {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	stream, err := rt.Events(ctx, &runtimev1.EventsRequest{})
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if _, err := stream.Header(); err != nil {
		t.Fatalf("Events header: %v", err)
	}
	l := &eventLog{added: make(chan struct{})}
	go func() {
		for {
			ev, err := stream.Recv()
			l.mu.Lock()
			if err != nil {
				l.err = err
			} else {
				l.events = append(l.events, ev)
			}
			close(l.added)
			l.added = make(chan struct{})
			l.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return l
}

// count is how many events of typ the log has for the container id.
func (l *eventLog) count(typ runtimev1.EventType, id string) (int, chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ev := range l.events {
		if ev.GetType() == typ && ev.GetContainerId() == id {
			n++
		}
	}
	return n, l.added, l.err
}

// waitFor waits for an event of typ of the container id.
func (l *eventLog) waitFor(t *testing.T, typ runtimev1.EventType, id string) {
	t.Helper()
	timeout := time.After(callTimeout)
	for {
		n, added, err := l.count(typ, id)
		if n > 0 {
			return
		}
		if err != nil {
			t.Fatalf("the stream ended waiting for %v of %s: %v", typ, id, err)
		}
		select {
		case <-added:
		case <-timeout:
			t.Fatalf("no %v of %s within %v", typ, id, callTimeout)
		}
	}
}

// removeAndCount removes the container id, waits for its removal on the
// stream and checks that the stream told of exactly exits exits of it
// (they all come before the removal).
func removeAndCount(t *testing.T, rt runtimev1.RuntimeClient, l *eventLog, id string, exits int) {
	t.Helper()
	removeContainer(t, rt, id)
	l.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_REMOVED, id)
	if n, _, _ := l.count(runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, id); n != exits {
		t.Errorf("exits of %s: got %d; want %d; the stream: %s", id, n, exits, l.of(id))
	}
}

// of lists the types of the events of the container id.
func (l *eventLog) of(id string) []runtimev1.EventType {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []runtimev1.EventType
	for _, ev := range l.events {
		if ev.GetContainerId() == id {
			out = append(out, ev.GetType())
		}
	}
	return out
}
