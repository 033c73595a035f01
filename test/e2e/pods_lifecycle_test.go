package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/podhost/podhost/host/localapi"
)

// criLogLine is one line of a CRI log file: time, stream, tag, text.
var criLogLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d) (stdout|stderr) [FP] `)

// TestPodLifecycle runs real pods through a real host and containerd: a pod
// reaches Running and its output is in its CRI log and `podhost logs`; the
// kubelet's events are recorded; its status has the node's address as its
// host IP and (host network) pod IP; exit codes reach the pod status; a
// restartPolicy Never pod whose container fails ends Failed and stays
// Failed while it is deleted.
func TestPodLifecycle(t *testing.T) {
	h := startPodHost(t)
	ctx := t.Context()

	t.Run("running pod and its logs", func(t *testing.T) {
		h.apply(busyPod("hello", v1.RestartPolicyAlways,
			sh("main", `echo hello-from-podhost; i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done`),
			sh("side", `echo side-car-here >&2; exec sleep 3600`)))
		pod := h.waitPod("hello", 60*time.Second, "running", running)
		if st := containerStatus(pod, "main"); st == nil || st.State.Running == nil || st.State.Running.StartedAt.IsZero() {
			t.Errorf("container main: %+v; want running with a start time", st)
		}
		// Outside Kubernetes mode the node's address is the default
		// route's, and a host-network pod's IP is the node's.
		wantIP := ""
		if ip, err := utilnet.ChooseHostInterface(); err == nil {
			wantIP = ip.String()
		}
		if pod.Status.HostIP != wantIP || pod.Status.PodIP != wantIP {
			t.Errorf("host IP %q, pod IP %q; want the node's address %q for both", pod.Status.HostIP, pod.Status.PodIP, wantIP)
		}

		var out string
		poll(t, 30*time.Second, func() bool {
			out, _ = h.hostCLI(ctx, "logs", "default/hello", "-c", "main")
			return strings.Contains(out, "hello-from-podhost") && strings.Contains(out, "tick 1")
		}, func() string { return "podhost logs default/hello -c main: " + out })
		if side, err := h.hostCLI(ctx, "logs", "default/hello", "-c", "side"); err != nil || !strings.Contains(side, "side-car-here") {
			t.Errorf("podhost logs -c side: %q, %v; want the stderr line side-car-here", side, err)
		}

		// The CRI log file under the host's root dir.
		pattern := filepath.Join(h.root, "pods", "default_hello_"+string(pod.UID), "main", "*.log")
		files, _ := filepath.Glob(pattern)
		if len(files) != 1 {
			t.Fatalf("log files %s: %v; want one", pattern, files)
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if !criLogLine.MatchString(first) || !strings.HasSuffix(first, " hello-from-podhost") {
			t.Errorf("first line of %s is not a CRI log line of hello-from-podhost: %q", files[0], first)
		}

		// The kubelet's events, through the CLI.
		var evOut string
		poll(t, 30*time.Second, func() bool {
			evOut, _ = h.hostCLI(ctx, "events", "--for", "default/hello")
			return strings.Contains(evOut, "Pulled") && strings.Contains(evOut, "Created container main") &&
				strings.Contains(evOut, "Started container main") && strings.Contains(evOut, "Started container side")
		}, func() string { return "podhost events --for default/hello:\n" + evOut })
	})

	t.Run("logs follow until the container exits", func(t *testing.T) {
		h.apply(busyPod("counter", v1.RestartPolicyNever,
			sh("count", `for i in 1 2 3 4; do echo line $i; sleep 1; done`)))
		h.waitPod("counter", 60*time.Second, "container started", func(p *v1.Pod) bool {
			c := containerStatus(p, "count")
			return c != nil && (c.State.Running != nil || c.State.Terminated != nil)
		})
		fctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		out, err := h.hostCLI(fctx, "logs", "default/counter", "--follow")
		if err != nil {
			t.Fatalf("podhost logs --follow: %v", err)
		}
		if fctx.Err() != nil {
			t.Fatalf("podhost logs --follow did not end when the container exited; got %q", out)
		}
		if !strings.Contains(out, "line 1\n") || !strings.Contains(out, "line 4\n") {
			t.Errorf("podhost logs --follow: %q; want line 1 to line 4", out)
		}
		h.waitPhase("counter", v1.PodSucceeded, 30*time.Second)
	})

	t.Run("exit codes propagate", func(t *testing.T) {
		cases := []struct {
			name   string
			policy v1.RestartPolicy
			code   int32
			phase  v1.PodPhase
		}{
			{"exit-3", v1.RestartPolicyNever, 3, v1.PodFailed},
			{"exit-0", v1.RestartPolicyNever, 0, v1.PodSucceeded},
			{"onfailure-exit-0", v1.RestartPolicyOnFailure, 0, v1.PodSucceeded},
			{"exit-137", v1.RestartPolicyNever, 137, v1.PodFailed},
		}
		for _, c := range cases {
			h.apply(busyPod(c.name, c.policy, sh("app", fmt.Sprintf("echo bye; exit %d", c.code))))
		}
		for _, c := range cases {
			pod := h.waitPhase(c.name, c.phase, 60*time.Second)
			st := containerStatus(pod, "app")
			if st == nil || st.State.Terminated == nil {
				t.Errorf("%s: container status %+v; want terminated", c.name, st)
				continue
			}
			if st.State.Terminated.ExitCode != c.code || st.RestartCount != 0 {
				t.Errorf("%s: exit code %d, restarts %d; want %d, 0", c.name, st.State.Terminated.ExitCode, st.RestartCount, c.code)
			}
			if want := map[bool]string{true: "Completed", false: "Error"}[c.code == 0]; st.State.Terminated.Reason != want {
				t.Logf("%s: terminated reason %q (kubelet says %q)", c.name, st.State.Terminated.Reason, want)
			}
		}
		out, err := h.hostCLI(ctx, "pods", "list")
		if err != nil || !strings.Contains(out, "exit-3") || !strings.Contains(out, "Failed") {
			t.Errorf("podhost pods list: %q, %v; want exit-3 listed as Failed", out, err)
		}
	})

	t.Run("Never pod that failed stays Failed while deleted", func(t *testing.T) {
		name := "exit-3" // failed in the previous subtest
		pod := h.waitPhase(name, v1.PodFailed, 60*time.Second)
		uid := string(pod.UID)

		wctx, stop := context.WithCancel(ctx)
		var (
			mu     sync.Mutex
			phases []string
			gone   = make(chan struct{})
		)
		watchDone := make(chan error, 1)
		go func() {
			watchDone <- h.client.WatchPods(wctx, func(ev localapi.PodEvent) error {
				if ev.Summary.Name != name {
					return nil
				}
				mu.Lock()
				phases = append(phases, string(ev.Type)+":"+ev.Summary.Phase)
				mu.Unlock()
				if ev.Type == localapi.Deleted {
					close(gone)
					return context.Canceled
				}
				return nil
			})
		}()
		h.delete(name, nil)
		select {
		case <-gone:
		case <-time.After(60 * time.Second):
			t.Errorf("no DELETED event within 60 s")
		}
		stop()
		<-watchDone
		mu.Lock()
		defer mu.Unlock()
		if len(phases) == 0 {
			t.Fatal("the watch saw no event of the pod")
		}
		for _, p := range phases {
			_, phase, _ := strings.Cut(p, ":")
			if phase != string(v1.PodFailed) {
				t.Errorf("pod %s left Failed while deleted; watch saw %v", name, phases)
				break
			}
		}
		h.waitGone(name, 30*time.Second)
		// Its one container never ran again.
		for _, c := range h.criContainers(uid) {
			if c.Metadata.Attempt != 0 {
				t.Errorf("container %s attempt %d of a Never pod", c.Metadata.Name, c.Metadata.Attempt)
			}
		}
	})
}
