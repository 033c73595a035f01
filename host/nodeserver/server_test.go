package nodeserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/streamproxy"
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

// fakeStreams answers pod web's container app with the URL of a streaming
// server that is never dialled (the requests here are not upgrades) and
// counts the calls.
type fakeStreams struct {
	mu    sync.Mutex
	calls int
}

func (f *fakeStreams) find(ns, pod string, uid types.UID, container string) (*url.URL, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	switch {
	case pod != "web" || (uid != "" && uid != "uid-web"):
		return nil, fmt.Errorf("%w: pod %s/%s", localapi.ErrNotFound, ns, pod)
	case container != "app" && container != "":
		return nil, fmt.Errorf("%w: container %q in pod %s/%s", localapi.ErrNotFound, container, ns, pod)
	}
	return &url.URL{Scheme: "http", Host: "127.0.0.1:1", Path: "/stream/token"}, nil
}

func (f *fakeStreams) Exec(_ context.Context, ns, pod string, uid types.UID, container string, _ []string, _ streamproxy.Options) (*url.URL, error) {
	return f.find(ns, pod, uid, container)
}

func (f *fakeStreams) Attach(_ context.Context, ns, pod string, uid types.UID, container string, _ streamproxy.Options) (*url.URL, error) {
	return f.find(ns, pod, uid, container)
}

func (f *fakeStreams) PortForward(_ context.Context, ns, pod string, uid types.UID, _ []int32) (*url.URL, error) {
	return f.find(ns, pod, uid, "")
}

func (f *fakeStreams) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeLogs) lastOptions() (localapi.LogOptions, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, f.pod
}

// startNode registers node n1 with its daemon endpoint and starts the
// server with the node's own credentials.
func startNode(t *testing.T, c *kubecluster.Cluster, logs LogsFunc, streams streamproxy.Streams, adjust ...func(*Options)) *Server {
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
	opts := Options{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile, ClientCAFile: c.CAFile,
		Client: nodeClient, NodeName: "n1", Logs: logs, Streams: streams}
	for _, f := range adjust {
		f(&opts)
	}
	s, err := New(opts)
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
	startNode(t, c, logs.logs, &fakeStreams{})
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
	streams := &fakeStreams{}
	s := startNode(t, c, logs.logs, streams)
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
	base := fmt.Sprintf("https://127.0.0.1:%d/", s.Port())
	const (
		logsPath = "containerLogs/default/web/app"
		execPath = "exec/default/web/app?command=sh&input=1&output=1"
		pfPath   = "portForward/default/web"
	)
	tests := []struct {
		name   string
		client *http.Client
		token  string
		path   string
		want   int
		body   string
	}{
		{"no credentials", plain, "", logsPath, http.StatusUnauthorized, "no client certificate"},
		{"a token the API server does not know", plain, "not-a-token", logsPath, http.StatusUnauthorized, "did not approve"},
		{"a service account without access", plain, saToken.Status.Token, logsPath, http.StatusForbidden, "may not get nodes/proxy"},
		{"an admin token", plain, adminCfg.BearerToken, logsPath, http.StatusOK, "first line of app"},
		{"the API server's client certificate", withCert, "", logsPath, http.StatusOK, "first line of app"},
		{"limitBytes", withCert, "", logsPath + "?limitBytes=5", http.StatusOK, "first"},
		{"bad tailLines", withCert, "", logsPath + "?tailLines=x", http.StatusBadRequest, `"tailLines"`},
		{"missing pod", withCert, "", "containerLogs/default/nope/app", http.StatusNotFound, "not found"},

		// Streams are POSTs (verb create); an allowed one reaches the
		// proxy, which wants an upgrade.
		{"exec: no credentials", plain, "", execPath, http.StatusUnauthorized, "no client certificate"},
		{"exec: a token the API server does not know", plain, "not-a-token", execPath, http.StatusUnauthorized, "did not approve"},
		{"exec: a service account without access", plain, saToken.Status.Token, execPath, http.StatusForbidden, "may not create nodes/proxy"},
		{"exec: an admin token", plain, adminCfg.BearerToken, execPath, http.StatusBadRequest, "Upgrade request required"},
		{"exec: the API server's client certificate", withCert, "", execPath, http.StatusBadRequest, "Upgrade request required"},
		{"exec: with the pod's UID", withCert, "", "exec/default/web/uid-web/app?command=sh&output=1", http.StatusBadRequest, "Upgrade request required"},
		{"exec: another UID", withCert, "", "exec/default/web/uid-old/app?command=sh&output=1", http.StatusNotFound, "pod default/web"},
		{"exec: missing pod", withCert, "", "exec/default/nope/app?command=sh&output=1", http.StatusNotFound, "pod default/nope"},
		{"exec: missing container", withCert, "", "exec/default/web/nope?command=sh&output=1", http.StatusNotFound, `container "nope" in pod default/web`},
		{"exec: no command", withCert, "", "exec/default/web/app?output=1", http.StatusBadRequest, `"command" is required`},
		{"exec: no stream", withCert, "", "exec/default/web/app?command=sh", http.StatusBadRequest, "at least 1 of stdin, stdout, stderr"},
		{"attach: the API server's client certificate", withCert, "", "attach/default/web/app?output=1", http.StatusBadRequest, "Upgrade request required"},
		{"portForward: no credentials", plain, "", pfPath, http.StatusUnauthorized, "no client certificate"},
		{"portForward: a token the API server does not know", plain, "not-a-token", pfPath, http.StatusUnauthorized, "did not approve"},
		{"portForward: a service account without access", plain, saToken.Status.Token, pfPath, http.StatusForbidden, "may not create nodes/proxy"},
		{"portForward: the API server's client certificate", withCert, "", pfPath, http.StatusBadRequest, "Upgrade request required"},
		{"portForward: missing pod", withCert, "", "portForward/default/nope", http.StatusNotFound, "pod default/nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodGet
			if !strings.HasPrefix(tt.path, "containerLogs/") {
				method = http.MethodPost
			}
			before := streams.count()
			req, _ := http.NewRequestWithContext(ctx, method, base+tt.path, nil)
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
			if refused := tt.want == http.StatusUnauthorized || tt.want == http.StatusForbidden; refused && streams.count() != before {
				t.Errorf("a refused request reached the runtime's streams")
			}
			if tt.name == "limitBytes" && string(body) != "first" {
				t.Errorf("limitBytes=5 gave %q; want the first five bytes", body)
			}
		})
	}
}
