package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// staticManifest is a static pod manifest of one busybox container that
// prints word and sleeps.
func staticManifest(name, word string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
    - name: main
      image: podhost.local/busybox:1
      imagePullPolicy: Never
      command: [sh, -c, 'echo %s; trap "exit 0" TERM; while true; do sleep 1; done']
`, name, word)
}

// TestSourcesManifestDirectory drives the file source through the real
// host: a manifest dropped into the directory becomes a running pod (the
// fsnotify path, no restart), an edited manifest is a new pod (new UID)
// that replaces the old one, whose containers are removed, and a removed
// manifest ends the pod and removes its containers and sandbox.
func TestSourcesManifestDirectory(t *testing.T) {
	h := startPodHost(t)
	name := staticName(t, "static-web")

	path := h.writeManifest("web.yaml", staticManifest("static-web", "first-version"))
	first := h.waitPod(name, 60*time.Second, "running", running)
	if src := first.Annotations["kubernetes.io/config.source"]; src != "file" {
		t.Errorf("static pod's config.source annotation = %q; want file", src)
	}
	if line, out := h.podsListLine("default/"+name, "Running", "1/1"); line == "" {
		t.Errorf("podhost pods list has no Running 1/1 line for %s:\n%s", name, out)
	}

	t.Run("edit gives a new UID that replaces the old pod", func(t *testing.T) {
		h.writeManifest("web.yaml", staticManifest("static-web", "second-version"))
		second := h.waitPod(name, 60*time.Second, "running with a new uid", func(p *v1.Pod) bool {
			return p.UID != first.UID && running(p)
		})
		if got := second.Spec.Containers[0].Command[2]; !strings.Contains(got, "second-version") {
			t.Errorf("the running pod has the old command %q", got)
		}
		h.waitRuntimeEmpty(string(first.UID), 60*time.Second)
		var uids []string
		poll(t, 10*time.Second, func() bool {
			uids = uids[:0]
			items, err := h.client.Pods(t.Context())
			if err != nil {
				return false
			}
			for _, it := range items {
				if it.Name == name {
					uids = append(uids, it.UID)
				}
			}
			return len(uids) == 1 && uids[0] == string(second.UID)
		}, func() string { return fmt.Sprintf("pods named %s: uids %v; want only %s", name, uids, second.UID) })
		first = second
	})

	t.Run("removed manifest: pod gone, containers removed", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		h.waitGone(name, 60*time.Second)
		h.waitRuntimeEmpty(string(first.UID), 60*time.Second)
		if line, out := h.podsListLine(name); line != "" {
			t.Errorf("podhost pods list still shows %s:\n%s", name, out)
		}
	})
}
