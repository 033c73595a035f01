package prober

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/lifecycle"
)

// hostPort splits a listener's address.
func hostPort(t *testing.T, addr string) (string, int32) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, int32(n)
}

func target(podIP string, port int32, h v1.ProbeHandler) lifecycle.ProbeTarget {
	c := &v1.Container{Name: "web", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: port}}}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{*c}}}
	return lifecycle.ProbeTarget{Pod: pod, Container: c, ContainerID: "c1", PodIP: podIP, Kind: lifecycle.Readiness,
		Probe: lifecycle.ProbeWithDefaults(&v1.Probe{ProbeHandler: h})}
}

func run(t *testing.T, r *Runner, tg lifecycle.ProbeTarget, timeout time.Duration) (lifecycle.ProbeResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, out, err := r.RunProbe(ctx, tg)
	if err != nil {
		t.Fatalf("RunProbe: %v", err)
	}
	return res, out
}

func TestHTTPGetProbe(t *testing.T) {
	var lastUA, lastHeader, lastHost string
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		lastUA, lastHeader, lastHost = r.UserAgent(), r.Header.Get("X-Probe"), r.Host
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/healthz", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://other.invalid/", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tls := httptest.NewTLSServer(mux)
	defer tls.Close()
	ip, port := hostPort(t, srv.Listener.Addr().String())
	_, tlsPort := hostPort(t, tls.Listener.Addr().String())
	get := func(path string, port intstr.IntOrString) *v1.HTTPGetAction {
		return &v1.HTTPGetAction{Path: path, Port: port}
	}
	tests := []struct {
		name    string
		podIP   string
		action  *v1.HTTPGetAction
		timeout time.Duration
		want    lifecycle.ProbeResult
		wantOut string
	}{
		{"2xx by port number", ip, get("/healthz", intstr.FromInt32(port)), time.Second, lifecycle.ProbeSuccess, "ok"},
		{"by port name", ip, get("/healthz", intstr.FromString("http")), time.Second, lifecycle.ProbeSuccess, "ok"},
		{"503 fails", ip, get("/fail", intstr.FromInt32(port)), time.Second, lifecycle.ProbeFailure, "HTTP probe failed with statuscode: 503"},
		{"redirect on the same host is followed", ip, get("/here", intstr.FromInt32(port)), time.Second, lifecycle.ProbeSuccess, "ok"},
		{"redirect to another host is a success with a warning", ip, get("/away", intstr.FromInt32(port)), time.Second, lifecycle.ProbeWarning, `Probe terminated redirects, Response body: <a href="http://other.invalid/">Found</a>.`},
		{"timeout fails", ip, get("/slow", intstr.FromInt32(port)), 200 * time.Millisecond, lifecycle.ProbeFailure, "context deadline exceeded"},
		{"host-network pod without IP probes loopback", "", get("/healthz", intstr.FromInt32(port)), time.Second, lifecycle.ProbeSuccess, "ok"},
		{"host field wins over the pod IP", "192.0.2.1", &v1.HTTPGetAction{Host: ip, Path: "/healthz", Port: intstr.FromInt32(port)}, time.Second, lifecycle.ProbeSuccess, "ok"},
		{"https without certificate check", ip, &v1.HTTPGetAction{Scheme: v1.URISchemeHTTPS, Path: "/healthz", Port: intstr.FromInt32(tlsPort)}, time.Second, lifecycle.ProbeSuccess, "ok"},
		{"nothing listening fails", ip, get("/", intstr.FromInt32(1)), time.Second, lifecycle.ProbeFailure, "connection refused"},
	}
	r := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := target(tt.podIP, port, v1.ProbeHandler{HTTPGet: tt.action})
			tg.Pod.Spec.HostNetwork = true
			res, out := run(t, r, tg, tt.timeout)
			if res != tt.want || !strings.Contains(out, tt.wantOut) {
				t.Fatalf("got %v %q; want %v containing %q", res, out, tt.want, tt.wantOut)
			}
		})
	}
	tg := target(ip, port, v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(port),
		HTTPHeaders: []v1.HTTPHeader{{Name: "X-Probe", Value: "yes"}, {Name: "Host", Value: "example.test"}}}})
	if res, _ := run(t, r, tg, time.Second); res != lifecycle.ProbeSuccess || lastUA != "kube-probe/podhost" || lastHeader != "yes" || lastHost != "example.test" {
		t.Fatalf("headers: result %v, User-Agent %q, X-Probe %q, Host %q", res, lastUA, lastHeader, lastHost)
	}
}

func TestProbeAddressErrors(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name string
		tg   lifecycle.ProbeTarget
	}{
		{"unknown port name", target("127.0.0.1", 80, v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromString("metrics")}})},
		{"pod network without IP", target("", 80, v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}})},
		{"no handler", target("127.0.0.1", 80, v1.ProbeHandler{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := r.RunProbe(context.Background(), tt.tg); err == nil {
				t.Fatal("RunProbe: no error")
			}
		})
	}
}

func TestTCPSocketProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ip, port := hostPort(t, ln.Addr().String())
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	r := New(Options{})
	if res, out := run(t, r, target(ip, port, v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromString("http")}}), time.Second); res != lifecycle.ProbeSuccess {
		t.Fatalf("open port: %v %q", res, out)
	}
	ln.Close()
	if res, out := run(t, r, target(ip, port, v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(port)}}), time.Second); res != lifecycle.ProbeFailure || !strings.Contains(out, "refused") {
		t.Fatalf("closed port: %v %q; want failure, connection refused", res, out)
	}
}

func TestGRPCProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_NOT_SERVING)
	go srv.Serve(ln)
	defer srv.Stop()
	ip, port := hostPort(t, ln.Addr().String())
	noHealth := grpc.NewServer()
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	go noHealth.Serve(ln2)
	defer noHealth.Stop()
	_, port2 := hostPort(t, ln2.Addr().String())
	db, other := "db", "missing"
	tests := []struct {
		name    string
		action  *v1.GRPCAction
		want    lifecycle.ProbeResult
		wantOut string
	}{
		{"server serving", &v1.GRPCAction{Port: port}, lifecycle.ProbeSuccess, ""},
		{"service not serving", &v1.GRPCAction{Port: port, Service: &db}, lifecycle.ProbeFailure, "NOT_SERVING"},
		{"unknown service", &v1.GRPCAction{Port: port, Service: &other}, lifecycle.ProbeFailure, "NotFound"},
		{"server without the health service", &v1.GRPCAction{Port: port2}, lifecycle.ProbeFailure, "does not implement"},
		{"nothing listening", &v1.GRPCAction{Port: 1}, lifecycle.ProbeFailure, "timeout"},
	}
	r := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, out := run(t, r, target(ip, port, v1.ProbeHandler{GRPC: tt.action}), 500*time.Millisecond)
			if res != tt.want || !strings.Contains(out, tt.wantOut) {
				t.Fatalf("got %v %q; want %v containing %q", res, out, tt.want, tt.wantOut)
			}
		})
	}
}

// scriptedExec answers ExecSync from a table keyed by the command's first
// word.
type scriptedExec map[string]struct {
	res runtimemanager.ExecResult
	err error
}

func (s scriptedExec) ExecSync(_ context.Context, _ string, cmd []string, _ time.Duration) (runtimemanager.ExecResult, error) {
	a := s[cmd[0]]
	return a.res, a.err
}

func TestExecProbe(t *testing.T) {
	ex := scriptedExec{
		"ok":      {res: runtimemanager.ExecResult{Stdout: []byte("fine")}},
		"bad":     {res: runtimemanager.ExecResult{Stderr: []byte("broken"), ExitCode: 1}},
		"quiet":   {res: runtimemanager.ExecResult{ExitCode: 2}},
		"slow":    {err: runtimemanager.ErrExecTimeout},
		"runtime": {err: runtimemanager.ErrUncertain},
	}
	tests := []struct {
		cmd     string
		want    lifecycle.ProbeResult
		wantOut string
		wantErr bool
	}{
		{"ok", lifecycle.ProbeSuccess, "fine", false},
		{"bad", lifecycle.ProbeFailure, "broken", false},
		{"quiet", lifecycle.ProbeFailure, "exited with 2", false},
		{"slow", lifecycle.ProbeFailure, "timed out", false},
		{"runtime", lifecycle.ProbeUnknown, "", true},
	}
	r := New(Options{Exec: ex})
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			res, out, err := r.RunProbe(context.Background(), target("", 0, v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{tt.cmd}}}))
			if (err != nil) != tt.wantErr || res != tt.want || !strings.Contains(out, tt.wantOut) {
				t.Fatalf("got %v %q %v; want %v containing %q (error %v)", res, out, err, tt.want, tt.wantOut, tt.wantErr)
			}
		})
	}
}

// recordingExec keeps the last command it was asked to run.
type recordingExec struct{ cmd []string }

func (r *recordingExec) ExecSync(_ context.Context, _ string, cmd []string, _ time.Duration) (runtimemanager.ExecResult, error) {
	r.cmd = cmd
	return runtimemanager.ExecResult{}, nil
}

func TestExecProbeExpandsStaticEnv(t *testing.T) {
	ex := &recordingExec{}
	tg := target("", 0, v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check", "$(MODE)", "$(FROM_FIELD)", "$$(MODE)"}}})
	tg.Container.Env = []v1.EnvVar{{Name: "MODE", Value: "deep"},
		{Name: "FROM_FIELD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	if _, _, err := New(Options{Exec: ex}).RunProbe(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	if want := []string{"check", "deep", "$(FROM_FIELD)", "$(MODE)"}; strings.Join(ex.cmd, " ") != strings.Join(want, " ") {
		t.Fatalf("command run: %q; want %q", ex.cmd, want)
	}
}

func TestRunHook(t *testing.T) {
	hits := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits <- r.URL.Path }))
	defer srv.Close()
	ip, port := hostPort(t, srv.Listener.Addr().String())
	ex := scriptedExec{"ok": {}, "bad": {res: runtimemanager.ExecResult{Stdout: []byte("no"), ExitCode: 3}}}
	r := New(Options{Exec: ex})
	tg := target(ip, port, v1.ProbeHandler{})
	tests := []struct {
		name        string
		h           v1.LifecycleHandler
		timeout     time.Duration
		wantErr     error
		wantAnyErr  bool
		wantHTTPHit string
	}{
		{name: "exec ok", h: v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"ok"}}}, timeout: time.Second},
		{name: "exec fails", h: v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"bad"}}}, timeout: time.Second, wantErr: ErrHookFailed},
		{name: "httpGet", h: v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/drain", Port: intstr.FromInt32(port)}}, timeout: time.Second, wantHTTPHit: "/drain"},
		{name: "httpGet nothing listening", h: v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(1)}}, timeout: time.Second, wantErr: ErrHookFailed},
		{name: "sleep cut off by the deadline", h: v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 30}}, timeout: 100 * time.Millisecond, wantErr: context.DeadlineExceeded},
		{name: "no handler", timeout: time.Second, wantAnyErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			err := r.RunHook(ctx, tg.Pod, tg.Container, "c1", ip, &tt.h)
			switch {
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("RunHook: %v; want %v", err, tt.wantErr)
			case tt.wantErr == nil && !tt.wantAnyErr && err != nil:
				t.Fatalf("RunHook: %v", err)
			case tt.wantAnyErr && err == nil:
				t.Fatal("RunHook: no error")
			}
			if tt.wantHTTPHit != "" {
				if got := <-hits; got != tt.wantHTTPHit {
					t.Fatalf("hook hit %q; want %q", got, tt.wantHTTPHit)
				}
			}
		})
	}
}
