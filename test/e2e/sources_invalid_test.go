package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestSourcesBadManifests puts every class of bad manifest next to a good
// static pod: each shows up in `podhost pods list` as Rejected with an error
// naming its file (or API request) and the field at fault, with a Warning
// event and a log line; the good pod keeps running untouched (same
// container, no restart) and the host never crashes (same PID throughout).
func TestSourcesBadManifests(t *testing.T) {
	h := startPodHost(t)
	ctx := t.Context()
	good := staticName(t, "good")
	h.writeManifest("good.yaml", staticManifest("good", "still-good"))
	goodPod, goodID := h.runningContainerID(good, 60*time.Second)
	pid := h.hostPID()

	const head = "apiVersion: v1\nkind: Pod\n"
	const ctr = "  containers:\n    - {name: c, image: podhost.local/busybox:1}\n"
	const badClaim = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"
	cases := []struct {
		class, file, doc string
		// listName is the name the rejected entry is listed under.
		listName string
		// want are substrings of its error: the file and the field.
		want []string
	}{
		{"invalid YAML", "bad-yaml.yaml", head + "metadata: {name: bad-yaml\nspec: [\n",
			"bad-yaml.yaml", []string{"bad-yaml.yaml", "yaml: line 3"}},
		{"unknown field", "bad-field.yaml", head + "metadata: {name: bad-field}\nspec:\n  containers:\n    - {name: c, image: podhost.local/busybox:1, imagePullPolcy: Never}\n",
			"bad-field.yaml", []string{"bad-field.yaml", `unknown field "spec.containers[0].imagePullPolcy"`}},
		{"missing image", "bad-image.yaml", head + "metadata: {name: bad-image}\nspec:\n  containers:\n    - {name: c}\n",
			"bad-image", []string{"bad-image.yaml", "spec.containers[0].image: Required value"}},
		{"bad DNS name", "bad-dns.yaml", head + "metadata: {name: Bad_Name}\nspec:\n" + ctr,
			"Bad_Name", []string{"bad-dns.yaml", "metadata.name: Invalid value"}},
		{"duplicate container names", "bad-dup.yaml", head + "metadata: {name: bad-dup}\nspec:\n" + ctr + "    - {name: c, image: podhost.local/busybox:1}\n",
			"bad-dup", []string{"bad-dup.yaml", `spec.containers[1].name: Duplicate value: "c"`}},
		{"unresolvable volume reference", "bad-volume.yaml", head + "metadata: {name: bad-volume}\nspec:\n  containers:\n    - name: c\n      image: podhost.local/busybox:1\n      volumeMounts: [{name: nowhere, mountPath: /data}]\n",
			"bad-volume", []string{"bad-volume.yaml", `spec.containers[0].volumeMounts[0].name: Not found: "nowhere"`}},
		{"bad restartPolicy", "bad-restart.yaml", head + "metadata: {name: bad-restart}\nspec:\n  restartPolicy: Sometimes\n" + ctr,
			"bad-restart", []string{"bad-restart.yaml", `spec.restartPolicy: Unsupported value: "Sometimes"`}},
		// The claim beside the pod lacks spec.volumeName: the pod's
		// reason names that, not only the claim's absence.
		{"claim without its volume", "bad-claim.yaml", badClaim + "---\n" + head + "metadata: {name: bad-claim}\nspec:\n" + ctr +
			"  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n",
			staticName(t, "bad-claim"), []string{"bad-claim.yaml", `claimName: Not found: "data"`, "claim default/data was rejected", "spec.volumeName: Required value"}},
	}
	for _, c := range cases {
		h.writeManifest(c.file, c.doc)
	}
	// A name that both sources claim: the API asks for the static pod's
	// name; the file source holds it, so the API's pod is the one rejected.
	clash := busyPod(good, v1.RestartPolicyAlways, sh("other", "sleep 3600"))
	h.apply(clash)

	for _, c := range cases {
		t.Run(c.class, func(t *testing.T) {
			var line, out string
			poll(t, 30*time.Second, func() bool {
				line, out = h.podsListLine(append([]string{"default/" + c.listName + " ", "Rejected"}, c.want...)...)
				return line != ""
			}, func() string {
				return fmt.Sprintf("no Rejected line for default/%s naming %q in podhost pods list:\n%s", c.listName, c.want, out)
			})
			evs := h.events(c.listName)
			if !hasEvent(evs, "Failed", c.file) {
				t.Errorf("no Warning Failed event naming %s for %s; events:\n%s", c.file, c.listName, eventsString(evs))
			}
			h.mu.Lock()
			logPath := h.logs[len(h.logs)-1]
			h.mu.Unlock()
			if b, _ := os.ReadFile(logPath); !strings.Contains(string(b), c.file+": document 1") {
				t.Errorf("host log never names %s: document 1", c.file)
			}
		})
	}
	t.Run("a rejected claim is listed under its file", func(t *testing.T) {
		var line, out string
		poll(t, 30*time.Second, func() bool {
			line, out = h.podsListLine("default/bad-claim.yaml ", "Rejected", "bad-claim.yaml: document 1: PersistentVolumeClaim default/data: spec.volumeName: Required value")
			return line != ""
		}, func() string { return "no Rejected line for the claim of bad-claim.yaml:\n" + out })
		if evs := h.events("bad-claim.yaml"); !hasEvent(evs, "Failed", "PersistentVolumeClaim default/data: spec.volumeName") {
			t.Errorf("no Warning Failed event for the claim; events:\n%s", eventsString(evs))
		}
	})

	t.Run("name claimed by the file source and the API", func(t *testing.T) {
		var line, out string
		poll(t, 30*time.Second, func() bool {
			line, out = h.podsListLine("default/"+good+" ", "Rejected", "api pod default/"+good, `held by source "file"`, "good.yaml")
			return line != ""
		}, func() string { return "no Rejected line for the API's claim on " + good + ":\n" + out })
		d, err := h.client.Pod(ctx, "default", good)
		if err != nil || d.Summary.Source != "file" || d.Summary.Phase != "Running" {
			t.Errorf("GET default/%s = %+v, %v; want the file source's running pod", good, d.Summary, err)
		}
	})

	t.Run("the good pod and the host are unaffected", func(t *testing.T) {
		now := h.waitPod(good, 10*time.Second, "running", running)
		if now.UID != goodPod.UID || now.Status.ContainerStatuses[0].ContainerID != goodID || now.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Errorf("good pod disturbed: uid %s→%s, container %s→%s, restarts %d",
				goodPod.UID, now.UID, goodID, now.Status.ContainerStatuses[0].ContainerID, now.Status.ContainerStatuses[0].RestartCount)
		}
		if got := h.hostPID(); got != pid || !processAlive(pid) {
			t.Fatalf("host pid %d → %d (alive %v): the host restarted or died\n%s", pid, got, processAlive(pid), h.logTail())
		}
		if n := len(h.runningContainers(string(goodPod.UID))); n != 1 {
			t.Errorf("containerd runs %d containers of the good pod; want 1", n)
		}
	})

	t.Run("a fixed manifest runs", func(t *testing.T) {
		h.writeManifest("bad-restart.yaml", staticManifest("bad-restart", "fixed"))
		h.waitPod(staticName(t, "bad-restart"), 60*time.Second, "running", running)
		if line, out := h.podsListLine("bad-restart.yaml", "Rejected"); line != "" {
			t.Errorf("the fixed manifest is still listed as rejected:\n%s", out)
		}
	})
}
