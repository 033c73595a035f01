package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/podhost/podhost/internal/registrartest"
)

// TestVolumesCSIRegistration registers the real loop driver at run time
// through the host's plugins_registry directory, as node-driver-registrar
// does with a kubelet (the registrar is internal/registrartest, written
// against the upstream pluginregistration v1 API), behind a volume-csi
// whose config lists no driver. A pod whose driver is not registered yet
// waits with FailedMount and starts once the driver registers; its volume
// is staged, published, unpublished and unstaged through the registered
// driver as through a configured one. Bad registrations are refused with
// the field named; the registrar's socket removed deregisters the driver.
func TestVolumesCSIRegistration(t *testing.T) {
	d := startLoopDriver(t)
	id := d.createVolume(t, "e2e-registered")
	h := csiHost(t, "")
	h.writeClaim("data", loopDriver, id)
	regDir := filepath.Join(h.root, "plugins_registry")
	zero := int64(0)

	register := func(t *testing.T) *registrartest.Registrar {
		t.Helper()
		r, err := registrartest.Serve(filepath.Join(regDir, "loop-reg.sock"), registrartest.CSIInfo(loopDriver, d.endpoint))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Stop)
		s, err := r.Status(t.Context())
		if err != nil {
			t.Fatalf("%v\n%s", err, h.logTail())
		}
		if !s.GetPluginRegistered() {
			t.Fatalf("registration refused: %s", s.GetError())
		}
		return r
	}

	t.Run("a pod waits for its driver to register", func(t *testing.T) {
		h.apply(claimsPod("csi-early", `echo written-via-registration > /data/file && sync && echo done; exec sleep 3600`, "data"))
		poll(t, 60*time.Second, func() bool {
			return hasEvent(h.events("csi-early"), "FailedMount", fmt.Sprintf("csi driver %q is neither configured nor registered", loopDriver))
		}, func() string { return "events:\n" + eventsString(h.events("csi-early")) + h.logTail() })
		if p, ok := h.get("csi-early"); !ok || p.Status.Phase != v1.PodPending {
			t.Errorf("pod %s; want Pending", podStatusString(p))
		}

		r := register(t)
		h.waitPod("csi-early", 3*time.Minute, "running", running)
		h.waitLog("csi-early", "main", "done")
		h.delete("csi-early", &zero)
		h.waitGone("csi-early", 60*time.Second)
		want := "NodeStageVolume OK,NodePublishVolume OK,NodeUnpublishVolume OK,NodeUnstageVolume OK"
		poll(t, 30*time.Second, func() bool { return strings.Join(d.calls(t), ",") == want },
			func() string { return fmt.Sprintf("driver calls %q; want %s", d.calls(t), want) })
		if !strings.Contains(h.fullLog(), "csi driver registered") {
			t.Errorf("no registration in the host log")
		}

		// The socket removed: the driver is gone, and a new pod waits.
		r.Stop()
		poll(t, 30*time.Second, func() bool { return strings.Contains(h.fullLog(), "csi driver deregistered") },
			func() string { return "no deregistration in the host log\n" + h.logTail() })
		h.apply(claimsPod("csi-after", `cat /data/file; exec sleep 3600`, "data"))
		poll(t, 60*time.Second, func() bool {
			return hasEvent(h.events("csi-after"), "FailedMount", fmt.Sprintf("csi driver %q is neither configured nor registered", loopDriver))
		}, func() string { return "events:\n" + eventsString(h.events("csi-after")) + h.logTail() })

		// Registered again: the waiting pod reads what the first wrote.
		register(t)
		h.waitPod("csi-after", 3*time.Minute, "running", running)
		h.waitLog("csi-after", "main", "written-via-registration")
		h.delete("csi-after", &zero)
		h.waitGone("csi-after", 60*time.Second)
		poll(t, 30*time.Second, func() bool { return strings.Join(d.calls(t), ",") == want+","+want },
			func() string { return fmt.Sprintf("driver calls %q; want %s twice", d.calls(t), want) })
	})

	// volume-csi killed: its restart lost the drivers it was told of, and
	// the host registers them with it again.
	t.Run("a restarted volume plugin gets its registered drivers again", func(t *testing.T) {
		register(t)
		before, ok := h.namedPlugin("csi")
		if !ok {
			t.Fatal("no csi plugin")
		}
		if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
			t.Fatalf("kill volume-csi (pid %d): %v", before.PID, err)
		}
		poll(t, 60*time.Second, func() bool {
			p, ok := h.namedPlugin("csi")
			return ok && p.Restarts > before.Restarts && p.State == "running"
		}, func() string { return "volume-csi not restarted\n" + h.logTail() })
		seen := len(d.calls(t))
		h.apply(claimsPod("csi-restarted", `cat /data/file; exec sleep 3600`, "data"))
		h.waitPod("csi-restarted", 3*time.Minute, "running", running)
		h.waitLog("csi-restarted", "main", "written-via-registration")
		h.delete("csi-restarted", &zero)
		h.waitGone("csi-restarted", 60*time.Second)
		want := "NodeStageVolume OK,NodePublishVolume OK,NodeUnpublishVolume OK,NodeUnstageVolume OK"
		poll(t, 30*time.Second, func() bool { return strings.Join(d.calls(t)[seen:], ",") == want },
			func() string { return fmt.Sprintf("driver calls %q; want %s", d.calls(t)[seen:], want) })
	})

	t.Run("bad registrations are refused", func(t *testing.T) {
		for i, c := range []struct {
			info *registerapi.PluginInfo
			want string
		}{
			{&registerapi.PluginInfo{Type: registerapi.DevicePlugin, Name: "gpu", SupportedVersions: []string{"v1beta1"}}, `type: "DevicePlugin" is not served`},
			{&registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: "old.csi", SupportedVersions: []string{"0.3.0"}}, "supported_versions:"},
			{registrartest.CSIInfo("other.csi", d.endpoint), `GetPluginInfo names it "` + loopDriver + `"`},
			{registrartest.CSIInfo("gone.csi", filepath.Join(t.TempDir(), "nobody.sock")), "gone.csi"},
		} {
			r, err := registrartest.Serve(filepath.Join(regDir, fmt.Sprintf("bad%d.sock", i)), c.info)
			if err != nil {
				t.Fatal(err)
			}
			s, err := r.Status(t.Context())
			r.Stop()
			if err != nil {
				t.Fatal(err)
			}
			if s.GetPluginRegistered() || !strings.Contains(s.GetError(), c.want) {
				t.Errorf("registration of %v: %v; want refused with %q", c.info, s, c.want)
			}
		}
		// The host and its plugin still serve the loop driver's neighbours.
		if p, ok := h.namedPlugin("csi"); !ok || p.State != "running" {
			t.Errorf("volume plugin after bad registrations: %+v", p)
		}
	})
}
