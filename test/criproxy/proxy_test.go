package criproxy

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// upstream is a real gRPC server (the standard health service) that
// records the namespace metadata of each call it serves.
type upstream struct {
	health *health.Server
	mu     sync.Mutex
	ns     []string
}

func (u *upstream) namespaces() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.ns...)
}

func startPair(t *testing.T) (*upstream, healthpb.HealthClient, *Proxy) {
	t.Helper()
	dir := t.TempDir()
	u := &upstream{health: health.NewServer()}
	record := func(ctx context.Context) {
		md, _ := metadata.FromIncomingContext(ctx)
		u.mu.Lock()
		u.ns = append(u.ns, md.Get("containerd-namespace")...)
		u.mu.Unlock()
	}
	srv := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			record(ctx)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(s any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			record(ss.Context())
			return h(s, ss)
		}))
	healthpb.RegisterHealthServer(srv, u.health)
	l, err := net.Listen("unix", filepath.Join(dir, "up.sock"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := Start(ctx, filepath.Join(dir, "up.sock"), filepath.Join(dir, "proxy.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	conn, err := grpc.NewClient("unix://"+p.Path(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return u, healthpb.NewHealthClient(conn), p
}

func TestProxyForwardsCountsAndFails(t *testing.T) {
	u, client, p := startPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "containerd-namespace", "k8s.io")

	check := func() (healthpb.HealthCheckResponse_ServingStatus, codes.Code) {
		r, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return 0, status.Code(err)
		}
		return r.GetStatus(), codes.OK
	}
	steps := []struct {
		name   string
		before func()
		status healthpb.HealthCheckResponse_ServingStatus
		code   codes.Code
	}{
		{name: "forwarded", status: healthpb.HealthCheckResponse_SERVING},
		{name: "first of two injected", before: func() { p.Fail("Check", 2, codes.Unavailable) }, code: codes.Unavailable},
		{name: "second of two injected", code: codes.Unavailable},
		{name: "forwarded again after n", status: healthpb.HealthCheckResponse_SERVING},
		{name: "forever by full name", before: func() { p.Fail("/grpc.health.v1.Health/Check", -1, codes.Internal) }, code: codes.Internal},
		{name: "still failing", code: codes.Internal},
		{name: "cleared", before: func() { p.Clear("/grpc.health.v1.Health/Check") }, status: healthpb.HealthCheckResponse_SERVING},
		{name: "upstream's own status", before: func() { u.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING) }, status: healthpb.HealthCheckResponse_NOT_SERVING},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		st, code := check()
		if st != s.status || code != s.code {
			t.Fatalf("%s: got %v / %v, want %v / %v", s.name, st, code, s.status, s.code)
		}
	}
	if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"}); status.Code(err) != codes.NotFound {
		t.Fatalf("an upstream error must come back with its code: got %v", err)
	}
	if got := p.Calls()["Check"]; got != len(steps)+1 {
		t.Errorf("Calls()[Check] = %d, want %d", got, len(steps)+1)
	}
	if got := p.Failed()["Check"]; got != 4 {
		t.Errorf("Failed()[Check] = %d, want 4", got)
	}
	// Injected failures never reach upstream; the rest carry their metadata.
	if got := len(u.namespaces()); got != len(steps)+1-4 {
		t.Errorf("upstream served %d calls, want %d", got, len(steps)+1-4)
	}
	for _, ns := range u.namespaces() {
		if ns != "k8s.io" {
			t.Fatalf("upstream saw namespace %q, want k8s.io", ns)
		}
	}
	p.Reset()
	if len(p.Calls()) != 0 || len(p.Failed()) != 0 {
		t.Errorf("Reset left %v / %v", p.Calls(), p.Failed())
	}
}

func TestProxyForwardsAServerStream(t *testing.T) {
	u, client, p := startPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u.health.SetServingStatus("svc", healthpb.HealthCheckResponse_SERVING)
	w, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	want := []healthpb.HealthCheckResponse_ServingStatus{healthpb.HealthCheckResponse_SERVING, healthpb.HealthCheckResponse_NOT_SERVING}
	for i, st := range want {
		r, err := w.Recv()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if r.GetStatus() != st {
			t.Fatalf("message %d: got %v, want %v", i, r.GetStatus(), st)
		}
		if i == 0 {
			u.health.SetServingStatus("svc", healthpb.HealthCheckResponse_NOT_SERVING)
		}
	}
	cancel()
	if _, err := w.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("after cancel: got %v, want Canceled", err)
	}
	if p.Calls()["Watch"] != 1 {
		t.Errorf("Calls()[Watch] = %d, want 1", p.Calls()["Watch"])
	}
}

// A held call goes upstream only once released, even after its client gave
// up on it, and only the next call of the method is held.
func TestProxyHoldsACallPastItsClient(t *testing.T) {
	u, client, p := startPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "containerd-namespace", "k8s.io")
	h := p.Hold("Check")

	callCtx, giveUp := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := client.Check(callCtx, &healthpb.HealthCheckRequest{})
		errc <- err
	}()
	<-h.Arrived()
	if n := len(u.namespaces()); n != 0 {
		t.Fatalf("upstream served %d calls while one was held", n)
	}
	giveUp()
	if err := <-errc; status.Code(err) != codes.Canceled {
		t.Fatalf("the client's held call: got %v, want Canceled", err)
	}
	h.Release()
	<-h.Done()
	if h.Err() != nil {
		t.Fatalf("upstream's answer to the released call: %v", h.Err())
	}
	if got := u.namespaces(); len(got) != 1 || got[0] != "k8s.io" {
		t.Fatalf("upstream saw %v; want the released call with its metadata", got)
	}
	if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("the call after the held one: %v", err)
	}
}
