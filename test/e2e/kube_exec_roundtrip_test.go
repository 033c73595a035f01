package e2e

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestKubeExecRoundTrip runs `true` in a container, n times each way, and
// logs the round trips' p50 and p90 for BENCHMARKS.md: kubectl exec
// (a process per exec, WebSocket through the API server and podhost),
// client-go's WebSocket executor through the API server and podhost in
// this process, SPDY at podhost's daemon endpoint as the API server calls
// it (podhost's own hop, without the API server), and CRI Exec straight
// to containerd with client-go's SPDY executor at its URL (the direct
// path). Every exec must succeed; the
// times are reported, not asserted.
func TestKubeExecRoundTrip(t *testing.T) {
	const n = 20
	k := startKubeHost(t)
	k.create(kubePod("rt", v1.RestartPolicyAlways, sh("app", `trap "exit 0" TERM; while true; do sleep 1; done`)))
	p := k.waitAPIRunning("rt", 90*time.Second)
	id := containerIDs(p)["app"]
	ctx := t.Context()

	req := k.cluster.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("rt").SubResource("exec").
		VersionedParams(&v1.PodExecOptions{Container: "app", Command: []string{"true"}, Stdout: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(k.cluster.Config, "GET", req.URL().String())
	if err != nil {
		t.Fatal(err)
	}
	node, err := k.cluster.Client.CoreV1().Nodes().Get(ctx, kubeNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodeURL := &url.URL{Scheme: "https", Host: fmt.Sprintf("127.0.0.1:%d", node.Status.DaemonEndpoints.KubeletEndpoint.Port),
		Path: "/exec/default/rt/app", RawQuery: "command=true&output=1"}
	nodeExec, err := remotecommand.NewSPDYExecutor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{
		CAFile: k.cluster.CAFile, CertFile: k.cluster.KubeletClientCertFile, KeyFile: k.cluster.KubeletClientKeyFile,
	}}, "POST", nodeURL)
	if err != nil {
		t.Fatal(err)
	}
	ways := []struct {
		name string
		run  func() error
	}{
		{"kubectl exec rt -- true", func() error {
			_, _, err := k.kubectl(t, "", nil, "exec", "rt", "-c", "app", "--", "true")
			return err
		}},
		{"client-go WebSocket through the API server and podhost", func() error {
			return ws.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &bytes.Buffer{}})
		}},
		{"SPDY at podhost's daemon endpoint with the API server's client certificate", func() error {
			return nodeExec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &bytes.Buffer{}})
		}},
		{"CRI Exec + SPDY at containerd's URL (direct)", func() error {
			resp, err := k.ctrd.Runtime.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"true"}, Stdout: true})
			if err != nil {
				return err
			}
			u, err := url.Parse(resp.Url)
			if err != nil {
				return err
			}
			ex, err := remotecommand.NewSPDYExecutor(&rest.Config{}, "POST", u)
			if err != nil {
				return err
			}
			return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &bytes.Buffer{}})
		}},
	}
	for _, w := range ways {
		var took []time.Duration
		for range n {
			began := time.Now()
			if err := w.run(); err != nil {
				t.Fatalf("%s: %v", w.name, err)
			}
			took = append(took, time.Since(began))
		}
		slices.Sort(took)
		t.Logf("%s: p50 %v p90 %v (n=%d)", w.name, took[n/2].Round(100*time.Microsecond), took[n*9/10].Round(100*time.Microsecond), n)
	}
}
