// Package inprocess serves an sdk.Plugin over real gRPC on a unix socket,
// inside the test process, and checks the status codes of every answer
// against the contract. It exists for the conformance kits sdk/runtimetest
// and sdk/volumetest; nothing else imports it.
package inprocess

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/sdk"
)

// Dial serves p on a unix socket in a fresh temporary directory and returns
// a client connection to it. Both are closed when t's test ends. Every
// answer with an error whose code allowed refuses fails t, naming the
// method. opts are the server's options (a kit's interceptor).
func Dial(t testing.TB, p sdk.Plugin, allowed func(method string, code codes.Code) bool, opts ...grpc.ServerOption) *grpc.ClientConn {
	t.Helper()
	// A unix socket path is limited to 108 bytes, which t.TempDir() under
	// nested subtests can exceed; the directory is short and still private.
	dir, err := os.MkdirTemp("", "podhost-kit-")
	if err != nil {
		t.Fatalf("creating socket directory: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "plugin.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("listening on %s: %v", sock, err)
	}
	srv := grpc.NewServer(opts...)
	if err := sdk.Register(srv, p); err != nil {
		t.Fatalf("registering plugin %q: %v", p.Name, err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	check := codeChecker{t: t, allowed: allowed}
	conn, err := grpc.NewClient("unix://"+sock,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(check.unary),
		grpc.WithChainStreamInterceptor(check.stream),
	)
	if err != nil {
		t.Fatalf("dialing plugin %q: %v", p.Name, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// codeChecker fails the test on an answer whose code the contract does not
// allow.
type codeChecker struct {
	t       testing.TB
	allowed func(method string, code codes.Code) bool
}

func (c codeChecker) verify(method string, err error) {
	code := status.Code(err)
	if code == codes.OK || c.allowed(method, code) {
		return
	}
	c.t.Errorf("%s answered %v (%v), a code the contract does not allow", method, code, err)
}

func (c codeChecker) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	c.verify(method, err)
	return err
}

func (c codeChecker) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		c.verify(method, err)
		return nil, err
	}
	return &checkedStream{ClientStream: s, ctx: ctx, method: method, check: c}, nil
}

// checkedStream checks the status that ends a stream. A stream the caller
// cancelled itself may end with CANCELLED.
type checkedStream struct {
	grpc.ClientStream
	ctx    context.Context
	method string
	check  codeChecker
}

func (s *checkedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil && !errors.Is(err, io.EOF) && s.ctx.Err() == nil {
		s.check.verify(s.method, err)
	}
	return err
}
