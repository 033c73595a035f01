package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/localapi"
)

// podWatch records a GET /v1/pods?watch=true stream.
type podWatch struct {
	mu     sync.Mutex
	events []localapi.PodEvent
}

func (w *podWatch) saw(typ localapi.ChangeType, name string, cond func(localapi.PodEvent) bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.events {
		if e.Type == typ && e.Summary.Name == name && (cond == nil || cond(e)) {
			return true
		}
	}
	return false
}

func (w *podWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, e := range w.events {
		fmt.Fprintf(&b, "  %s %s/%s %s %s\n", e.Type, e.Summary.Namespace, e.Summary.Name, e.Summary.Phase, e.Summary.Reason)
	}
	return b.String()
}

// TestAPIPods drives the local API through the CLI and the client: apply
// (created, then unchanged), list, get, a watch that sees ADDED, MODIFIED
// and DELETED, delete with a grace period shorter than the pod's (the pod
// ignores SIGTERM, so only the override ends it in time), and delete with
// --force (gone from the API at once, containers removed).
func TestAPIPods(t *testing.T) {
	h := startPodHost(t)
	ctx := t.Context()

	watch := &podWatch{}
	wctx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan error, 1)
	go func() {
		watchDone <- h.client.WatchPods(wctx, func(e localapi.PodEvent) error {
			watch.mu.Lock()
			watch.events = append(watch.events, e)
			watch.mu.Unlock()
			return nil
		})
	}()
	defer func() {
		stopWatch()
		if err := <-watchDone; err != nil {
			t.Errorf("watch ended with %v", err)
		}
	}()

	stubborn := busyPod("stubborn", v1.RestartPolicyAlways, sh("main", `trap "" TERM; while true; do sleep 1; done`))
	stubborn.Spec.TerminationGracePeriodSeconds = new(int64(300))
	manifest := filepath.Join(t.TempDir(), "stubborn.json")
	b, err := json.Marshal(stubborn)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, b, 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("apply, list, get", func(t *testing.T) {
		out, err := h.hostCLI(ctx, "pods", "apply", "-f", manifest)
		if err != nil || !strings.Contains(out, "pod default/stubborn created") {
			t.Fatalf("podhost pods apply: %q, %v", out, err)
		}
		pod := h.waitPod("stubborn", 60*time.Second, "running", running)
		if out, err := h.hostCLI(ctx, "pods", "apply", "-f", manifest); err != nil || !strings.Contains(out, "unchanged") {
			t.Errorf("applying the same manifest again: %q, %v; want unchanged", out, err)
		}
		if line, all := h.podsListLine("default/stubborn", "Running", "1/1"); line == "" {
			t.Errorf("podhost pods list has no Running line for stubborn:\n%s", all)
		}
		d, err := h.client.Pod(ctx, "default", "stubborn")
		if err != nil || d.Summary.Source != "api" || d.Pod.UID != pod.UID || d.Summary.Phase != "Running" {
			t.Errorf("GET default/stubborn: %+v, %v", d.Summary, err)
		}
		if out, err := h.hostCLI(ctx, "pods", "get", "default/stubborn"); err != nil || !strings.Contains(out, "uid: "+string(pod.UID)) {
			t.Errorf("podhost pods get: %v\n%s", err, out)
		}
		if _, err := h.client.Pod(ctx, "default", "nosuchpod"); !isStatus(err, 404) {
			t.Errorf("GET an unknown pod: %v; want 404", err)
		}
		poll(t, 30*time.Second, func() bool {
			return watch.saw(localapi.Added, "stubborn", nil) &&
				watch.saw(localapi.Modified, "stubborn", func(e localapi.PodEvent) bool { return e.Summary.Phase == "Running" })
		}, func() string { return "watch did not see stubborn ADDED and MODIFIED to Running:\n" + watch.String() })
	})

	t.Run("delete with a grace period", func(t *testing.T) {
		pod, _ := h.get("stubborn")
		start := time.Now()
		out, err := h.hostCLI(ctx, "pods", "delete", "default/stubborn", "--grace-period", "2", "--wait", "--timeout", "60s")
		took := time.Since(start)
		if err != nil {
			t.Fatalf("podhost pods delete --grace-period 2 --wait: %v\n%s\n%s", err, out, h.logTail())
		}
		// The pod ignores SIGTERM and asks for 300 s: only the 2 s override
		// ends it this soon (SIGKILL after the grace period).
		if took < 2*time.Second || took > 30*time.Second {
			t.Errorf("delete with grace 2 s took %s; want about 2 s (≥ 2 s, far less than the pod's 300 s)", took)
		}
		h.waitGone("stubborn", 10*time.Second)
		h.waitRuntimeEmpty(string(pod.UID), 30*time.Second)
		poll(t, 10*time.Second, func() bool { return watch.saw(localapi.Deleted, "stubborn", nil) },
			func() string { return "watch did not see stubborn DELETED:\n" + watch.String() })
	})

	t.Run("delete with --force", func(t *testing.T) {
		forced := busyPod("forced", v1.RestartPolicyAlways, sh("main", `trap "" TERM; while true; do sleep 1; done`))
		forced.Spec.TerminationGracePeriodSeconds = new(int64(300))
		h.apply(forced)
		pod := h.waitPod("forced", 60*time.Second, "running", running)
		if _, err := h.hostCLI(ctx, "pods", "delete", "default/forced", "--force"); err != nil {
			t.Fatalf("podhost pods delete --force: %v", err)
		}
		h.waitGone("forced", 5*time.Second)
		h.waitRuntimeEmpty(string(pod.UID), 30*time.Second)
		poll(t, 10*time.Second, func() bool { return watch.saw(localapi.Deleted, "forced", nil) },
			func() string { return "watch did not see forced DELETED:\n" + watch.String() })
		if _, err := h.hostCLI(ctx, "pods", "delete", "default/forced"); err == nil {
			t.Errorf("deleting a deleted pod succeeded; want not found")
		}
	})
}

// isStatus reports whether err is an API answer with the status code.
func isStatus(err error, code int) bool {
	var apiErr *localapi.APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == code
}
