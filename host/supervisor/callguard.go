package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// callGuard ties the gRPC calls of one plugin instance to the life of its
// process: a call is cancelled as soon as the process is known to have
// exited, and its error then wraps ErrPluginExited. It is installed on the
// instance's connection as chained unary and stream interceptors.
type callGuard struct {
	plugin string
	// died is cancelled when the instance's process exited or was killed.
	died  context.Context
	grace time.Duration
}

// errInstanceDied is the cancel cause of calls cut short by the guard.
var errInstanceDied = errors.New("plugin process exited")

func (g *callGuard) dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(g.unary),
		grpc.WithChainStreamInterceptor(g.stream),
	}
}

// join returns ctx cancelled also when the instance dies, and the function
// that releases it.
func (g *callGuard) join(ctx context.Context) (context.Context, context.CancelFunc) {
	joined, cancel := context.WithCancelCause(ctx)
	stopDied := context.AfterFunc(g.died, func() { cancel(errInstanceDied) })
	// Once joined is done, for whatever reason, stop watching died.
	context.AfterFunc(joined, func() { stopDied() })
	return joined, func() { cancel(nil) }
}

func (g *callGuard) exited(err error) error {
	if err == nil {
		return fmt.Errorf("plugin %q: %w", g.plugin, ErrPluginExited)
	}
	return fmt.Errorf("plugin %q: %w: %w", g.plugin, ErrPluginExited, err)
}

// notSent is the error of a call refused because the instance had
// already died: it never reached the plugin.
func (g *callGuard) notSent() error {
	return fmt.Errorf("plugin %q: %w (%w)", g.plugin, ErrPluginExited, ErrNotSent)
}

// mapErr turns the error of a call made with ctx into ErrPluginExited when
// the plugin died under it. A transport error (Unavailable, Canceled) may
// arrive a moment before go-plugin notices the exit, so it waits up to
// grace for the exit to be confirmed.
func (g *callGuard) mapErr(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	if g.died.Err() != nil {
		return g.exited(err)
	}
	if ctx.Err() != nil {
		return err
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
	default:
		return err
	}
	t := time.NewTimer(g.grace)
	defer t.Stop()
	select {
	case <-g.died.Done():
		return g.exited(err)
	case <-ctx.Done():
	case <-t.C:
	}
	return err
}

func (g *callGuard) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if g.died.Err() != nil {
		return g.notSent()
	}
	joined, release := g.join(ctx)
	defer release()
	return g.mapErr(ctx, invoker(joined, method, req, reply, cc, opts...))
}

func (g *callGuard) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if g.died.Err() != nil {
		return nil, g.notSent()
	}
	joined, release := g.join(ctx)
	cs, err := streamer(joined, desc, cc, method, opts...)
	if err != nil {
		release()
		return nil, g.mapErr(ctx, err)
	}
	return &guardedStream{ClientStream: cs, guard: g, ctx: ctx, release: release}, nil
}

// guardedStream maps the errors of a stream and releases its joined context
// when the stream ends.
type guardedStream struct {
	grpc.ClientStream
	guard   *callGuard
	ctx     context.Context // the caller's, to tell its cancellation apart
	release context.CancelFunc
}

func (s *guardedStream) SendMsg(m any) error {
	return s.guard.mapErr(s.ctx, s.ClientStream.SendMsg(m))
}

func (s *guardedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		s.release()
	}
	return s.guard.mapErr(s.ctx, err)
}

var (
	_ grpc.UnaryClientInterceptor  = (*callGuard)(nil).unary
	_ grpc.StreamClientInterceptor = (*callGuard)(nil).stream
	_ grpc.ClientStream            = (*guardedStream)(nil)
)
