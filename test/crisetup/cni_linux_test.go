package crisetup

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
)

// TestPodNetwork starts an instance with a pod network: CRI reports the
// network ready, a sandbox with its own network namespace gets an IP of
// PodSubnet, the host reaches a server in it at that IP, and Stop removes
// the bridge.
func TestPodNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("a private containerd (root): not under -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := start(ctx, t.TempDir(), true, []Option{WithPodNetwork()})
	if err != nil {
		t.Fatalf("start private containerd with a pod network: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	if !c.PodSubnet.IsValid() {
		t.Fatal("no pod subnet")
	}
	st, err := c.Runtime.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cond := range st.GetStatus().GetConditions() {
		if cond.Type == "NetworkReady" && !cond.Status {
			t.Fatalf("NetworkReady false: %s %s", cond.Reason, cond.Message)
		}
	}
	config := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "net", Namespace: "default", Uid: "net-uid"}}
	sb, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: config})
	if err != nil {
		t.Fatalf("RunPodSandbox with a pod network: %v\n%s", err, c.LogTail(30))
	}
	sst, err := c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId})
	if err != nil {
		t.Fatal(err)
	}
	ip, err := netip.ParseAddr(sst.GetStatus().GetNetwork().GetIp())
	if err != nil || !c.PodSubnet.Contains(ip) || ip == gatewayOf(c.PodSubnet) {
		t.Fatalf("sandbox IP %q (%v); want a pod address of %v", sst.GetStatus().GetNetwork().GetIp(), err, c.PodSubnet)
	}
	ctr, err := c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sb.PodSandboxId, SandboxConfig: config,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "httpd"},
			Image:    &runtimeapi.ImageSpec{Image: localimages.BusyboxName},
			Command:  []string{"sh", "-c", "httpd -f -p 8080 -h /"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId}); err != nil {
		t.Fatal(err)
	}
	addr := netip.AddrPortFrom(ip, 8080).String()
	var dialErr error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var conn net.Conn
		if conn, dialErr = net.DialTimeout("tcp", addr, time.Second); dialErr == nil {
			conn.Close()
			break
		}
	}
	if dialErr != nil {
		t.Fatalf("the host cannot reach the pod at %s: %v", addr, dialErr)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", c.Bridge)); err == nil {
		t.Errorf("bridge %s left after Stop", c.Bridge)
	}
}
