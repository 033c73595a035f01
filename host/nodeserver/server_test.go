package nodeserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/test/kubecluster"
)

// fakeLogs answers every container's log with two lines and records the
// options it was asked with.
type fakeLogs struct {
	mu   sync.Mutex
	last localapi.LogOptions
	pod  string
}

func (f *fakeLogs) logs(_ context.Context, ns, pod string, opts localapi.LogOptions, w io.Writer) error {
	f.mu.Lock()
	f.last, f.pod = opts, ns+"/"+pod
	f.mu.Unlock()
	if pod != "web" {
		return fmt.Errorf("pod %s/%s: %w", ns, pod, localapi.ErrNotFound)
	}
	_, err := io.WriteString(w, "first line of "+opts.Container+"\nsecond line\n")
	return err
}

func (f *fakeLogs) lastOptions() (localapi.LogOptions, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, f.pod
}

// startNode registers node n1 with its daemon endpoint and starts the
// server with the node's own credentials.
func startNode(t *testing.T, c *kubecluster.Cluster, logs LogsFunc) *Server {
	t.Helper()
	ctx := t.Context()
	nodeClient, err := c.NodeClient("n1")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := c.NodeServingCert("n1", net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile, ClientCAFile: c.CAFile,
		Client: nodeClient, NodeName: "n1", Logs: logs})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	node, err := nodeClient.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = s.Port()
	if _, err := nodeClient.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: v1.PodSpec{
		NodeName: "n1", AutomountServiceAccountToken: ptr.To(false),
		Containers: []v1.Container{{Name: "app", Image: "busybox"}},
	}}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKubectlLogsThroughTheAPIServer(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	logs := &fakeLogs{}
	startNode(t, c, logs.logs)
	ctx := t.Context()

	out, err := c.Kubectl(ctx, "logs", "-n", "default", "web", "-c", "app", "--tail=1", "--timestamps")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "first line of app") {
		t.Errorf("kubectl logs printed %q; want the container's log", out)
	}
	opts, pod := logs.lastOptions()
	if pod != "default/web" || opts.Container != "app" || opts.TailLines == nil || *opts.TailLines != 1 || !opts.Timestamps || opts.Follow {
		t.Errorf("the node was asked for %s with %+v; want default/web, container app, tail 1, timestamps", pod, opts)
	}
	if _, err := c.Kubectl(ctx, "logs", "-n", "default", "web", "--previous", "--since=1h"); err != nil {
		t.Fatal(err)
	}
	if opts, _ := logs.lastOptions(); !opts.Previous || opts.SinceTime == nil {
		t.Errorf("kubectl logs --previous --since=1h asked with %+v; want previous and a since time", opts)
	}
}

func TestOnlyTheAPIServerAndApprovedTokensAreServed(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	logs := &fakeLogs{}
	s := startNode(t, c, logs.logs)
	ctx := t.Context()

	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	apiCert, err := tls.LoadX509KeyPair(c.KubeletClientCertFile, c.KubeletClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	withCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{apiCert}}}}
	saToken, err := c.Client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	adminCfg, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("https://127.0.0.1:%d/containerLogs/default/", s.Port())
	tests := []struct {
		name   string
		client *http.Client
		token  string
		path   string
		want   int
		body   string
	}{
		{"no credentials", plain, "", "web/app", http.StatusUnauthorized, "no client certificate"},
		{"a token the API server does not know", plain, "not-a-token", "web/app", http.StatusUnauthorized, "did not approve"},
		{"a service account without access", plain, saToken.Status.Token, "web/app", http.StatusForbidden, "may not get nodes/proxy"},
		{"an admin token", plain, adminCfg.BearerToken, "web/app", http.StatusOK, "first line of app"},
		{"the API server's client certificate", withCert, "", "web/app", http.StatusOK, "first line of app"},
		{"limitBytes", withCert, "", "web/app?limitBytes=5", http.StatusOK, "first"},
		{"bad tailLines", withCert, "", "web/app?tailLines=x", http.StatusBadRequest, `"tailLines"`},
		{"missing pod", withCert, "", "nope/app", http.StatusNotFound, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+tt.path, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := tt.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.body) {
				t.Fatalf("%d %q; want %d with %q", resp.StatusCode, body, tt.want, tt.body)
			}
			if tt.name == "limitBytes" && string(body) != "first" {
				t.Errorf("limitBytes=5 gave %q; want the first five bytes", body)
			}
		})
	}
}
