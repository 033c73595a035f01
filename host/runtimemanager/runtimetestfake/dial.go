package runtimetestfake

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Dial serves srv over real gRPC on an in-memory listener and returns a
// client to it; both end with t.
func Dial(t testing.TB, srv runtimev1.RuntimeServer) runtimev1.RuntimeClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	runtimev1.RegisterRuntimeServer(s, srv)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///fake",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dialing the fake runtime: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return runtimev1.NewRuntimeClient(conn)
}
