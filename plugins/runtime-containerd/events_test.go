package main

import (
	"context"
	"maps"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/test/crisetup"
)

// serve serves p over gRPC on a unix socket until t ends and returns a
// client of its Runtime service.
func serve(t *testing.T, p sdk.Plugin) runtimev1.RuntimeClient {
	t.Helper()
	dir, err := os.MkdirTemp("", "rc-plugin-") // short: a socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	lis, err := net.Listen("unix", filepath.Join(dir, "p.sock"))
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	if err := sdk.Register(srv, p); err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return runtimev1.NewRuntimeClient(conn)
}

// testEventsOfOthers changes containerd behind the plugin's back, straight
// through CRI, and expects the watcher to report each change.
func testEventsOfOthers(t *testing.T, rt runtimev1.RuntimeClient, c *crisetup.Containerd, adjust func(*runtimev1.SandboxConfig)) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*callTimeout)
	defer cancel()
	stream, err := rt.Events(ctx, &runtimev1.EventsRequest{})
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if _, err := stream.Header(); err != nil {
		t.Fatalf("Events header: %v", err)
	}
	expect := func(typ runtimev1.EventType, sandbox, container string, labels map[string]string) {
		t.Helper()
		for {
			ev, err := stream.Recv()
			if err != nil {
				t.Fatalf("Events: got %v while waiting for %v of %s/%s", err, typ, sandbox, container)
			}
			if ev.GetType() != typ || ev.GetSandboxId() != sandbox || ev.GetContainerId() != container {
				continue
			}
			if !maps.Equal(ev.GetLabels(), labels) {
				t.Errorf("%v: got labels %v; want %v", typ, ev.GetLabels(), labels)
			}
			return
		}
	}

	pod := &runtimev1.SandboxConfig{Metadata: &runtimev1.SandboxMetadata{Name: "others", Namespace: "test", Uid: "others-" + time.Now().Format("150405.000000000"), Attempt: 1}}
	adjust(pod)
	sbLabels := map[string]string{"podhost.io/pod": "others"}
	sbCfg := sandboxConfigToCRI(sandboxSpecFromProto(pod))
	sbCfg.Labels = sbLabels // as a client other than the plugin makes it
	sb, err := c.Runtime.RunPodSandbox(ctx, &criapi.RunPodSandboxRequest{Config: sbCfg})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		_, _ = c.Runtime.RemovePodSandbox(ctx, &criapi.RemovePodSandboxRequest{PodSandboxId: sb.GetPodSandboxId()})
	})
	sbID := sb.GetPodSandboxId()
	expect(runtimev1.EventType_EVENT_TYPE_SANDBOX_READY, sbID, "", sbLabels)

	ctrLabels := map[string]string{"podhost.io/container": "short"}
	ctr, err := c.Runtime.CreateContainer(ctx, &criapi.CreateContainerRequest{
		PodSandboxId:  sbID,
		SandboxConfig: sbCfg,
		Config: &criapi.ContainerConfig{
			Metadata: &criapi.ContainerMetadata{Name: "short"},
			Image:    &criapi.ImageSpec{Image: localimages.BusyboxName},
			Command:  []string{"sh", "-c", "sleep 1; exit 3"},
			Labels:   ctrLabels,
			LogPath:  "short.log",
		},
	})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	id := ctr.GetContainerId()
	expect(runtimev1.EventType_EVENT_TYPE_CONTAINER_CREATED, sbID, id, ctrLabels)
	if _, err := c.Runtime.StartContainer(ctx, &criapi.StartContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	expect(runtimev1.EventType_EVENT_TYPE_CONTAINER_STARTED, sbID, id, ctrLabels)
	expect(runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, sbID, id, ctrLabels) // by itself
	// The plugin reports the exit from containerd's event, before CRI
	// shows it (exits.go); another client sees the container running till
	// then, and removing it would kill a task whose shim is gone.
	criExited(t, c, id)
	if _, err := c.Runtime.RemoveContainer(ctx, &criapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("RemoveContainer: %v", err)
	}
	expect(runtimev1.EventType_EVENT_TYPE_CONTAINER_REMOVED, sbID, id, ctrLabels)
	if _, err := c.Runtime.StopPodSandbox(ctx, &criapi.StopPodSandboxRequest{PodSandboxId: sbID}); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	expect(runtimev1.EventType_EVENT_TYPE_SANDBOX_NOTREADY, sbID, "", sbLabels)
	if _, err := c.Runtime.RemovePodSandbox(ctx, &criapi.RemovePodSandboxRequest{PodSandboxId: sbID}); err != nil {
		t.Fatalf("RemovePodSandbox: %v", err)
	}
	expect(runtimev1.EventType_EVENT_TYPE_SANDBOX_REMOVED, sbID, "", sbLabels)
}
