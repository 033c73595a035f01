package criproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Proxy forwards the calls made on its unix socket to the upstream socket.
type Proxy struct {
	path     string
	upstream *grpc.ClientConn
	server   *grpc.Server
	done     chan struct{}

	mu     sync.Mutex
	calls  map[string]int
	failed map[string]int
	faults map[string]*fault
	holds  map[string]*Held
}

type fault struct {
	left int // < 0: every call
	code codes.Code
}

// Start listens on the unix socket listen (removed first if it exists) and
// forwards to the unix socket upstream. Close stops it; ctx bounds only the
// start.
func Start(ctx context.Context, upstream, listen string) (*Proxy, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("unix://"+upstream,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		return nil, fmt.Errorf("criproxy: upstream %s: %w", upstream, err)
	}
	if err := os.Remove(listen); err != nil && !errors.Is(err, os.ErrNotExist) {
		conn.Close()
		return nil, fmt.Errorf("criproxy: %w", err)
	}
	l, err := net.Listen("unix", listen)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("criproxy: %w", err)
	}
	p := &Proxy{
		path:     listen,
		upstream: conn,
		done:     make(chan struct{}),
		calls:    map[string]int{},
		failed:   map[string]int{},
		faults:   map[string]*fault{},
		holds:    map[string]*Held{},
	}
	p.server = grpc.NewServer(
		grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(p.handle))
	go func() {
		defer close(p.done)
		_ = p.server.Serve(l)
	}()
	return p, nil
}

// Path is the socket the proxy listens on: the address to give the client.
func (p *Proxy) Path() string { return p.path }

// Close stops serving, ends the calls in flight and closes the upstream
// connection.
func (p *Proxy) Close() error {
	p.server.Stop()
	<-p.done
	return p.upstream.Close()
}

// Fail makes the next n calls of method fail with code, without reaching
// upstream; n < 0 fails every call until Clear. method is a full gRPC
// method ("/runtime.v1.RuntimeService/StopContainer") or its last element
// ("StopContainer").
func (p *Proxy) Fail(method string, n int, code codes.Code) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n == 0 {
		delete(p.faults, method)
		return
	}
	p.faults[method] = &fault{left: n, code: code}
}

// Clear removes the fault on method.
func (p *Proxy) Clear(method string) { p.Fail(method, 0, codes.OK) }

// Calls returns how many calls of each method arrived since the start or
// the last Reset, failed ones included, by short method name
// ("StopContainer"); services are told apart only where two share a name,
// which CRI's do not.
func (p *Proxy) Calls() map[string]int { return p.snapshot(p.calls) }

// Failed returns how many calls of each method the proxy failed itself.
func (p *Proxy) Failed() map[string]int { return p.snapshot(p.failed) }

// Reset sets every count back to zero; faults stay.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = map[string]int{}
	p.failed = map[string]int{}
}

func (p *Proxy) snapshot(m map[string]int) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// admit counts a call of full method and says which error, if any, to
// fail it with.
func (p *Proxy) admit(full string) error {
	short := full[strings.LastIndex(full, "/")+1:]
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[short]++
	f := p.faults[full]
	if f == nil {
		f = p.faults[short]
	}
	if f == nil {
		return nil
	}
	if f.left > 0 {
		f.left--
		if f.left == 0 {
			delete(p.faults, full)
			delete(p.faults, short)
		}
	}
	p.failed[short]++
	return status.Errorf(f.code, "criproxy: injected failure of %s", short)
}

// Held is a unary call that Hold stopped on its way upstream.
type Held struct {
	arrived, release, done chan struct{}
	once                   sync.Once
	err                    error
}

// Hold makes the next call of method (as in Fail) wait, its request read,
// before it goes upstream, until Release. A held call goes upstream once
// released even if its client has gone meanwhile, as a call that had
// reached containerd before its client died does; the answer is then
// dropped. Hold is for unary methods only.
func (p *Proxy) Hold(method string) *Held {
	h := &Held{arrived: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds[method] = h
	return h
}

// Arrived is closed when the held call has arrived.
func (h *Held) Arrived() <-chan struct{} { return h.arrived }

// Release lets the held call go upstream; it may be called more than once.
func (h *Held) Release() { h.once.Do(func() { close(h.release) }) }

// Done is closed when upstream has answered the released call.
func (h *Held) Done() <-chan struct{} { return h.done }

// Err is upstream's answer to the released call, once Done is closed.
func (h *Held) Err() error { return h.err }

// held takes the hold on full method, if any.
func (p *Proxy) held(full string) *Held {
	short := full[strings.LastIndex(full, "/")+1:]
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range []string{full, short} {
		if h := p.holds[m]; h != nil {
			delete(p.holds, m)
			return h
		}
	}
	return nil
}

// forwardHeld reads the request of a held unary call, waits for Release
// and forwards it with a context its client's end does not cancel.
func (p *Proxy) forwardHeld(h *Held, full string, in grpc.ServerStream) error {
	req := &frame{}
	err := in.RecvMsg(req)
	close(h.arrived)
	if err != nil {
		h.err = err
		close(h.done)
		return err
	}
	<-h.release
	ctx := context.WithoutCancel(in.Context())
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		ctx = metadata.NewOutgoingContext(ctx, md.Copy())
	}
	resp := &frame{}
	h.err = p.upstream.Invoke(ctx, full, req, resp)
	close(h.done)
	if h.err != nil {
		return h.err
	}
	return in.SendMsg(resp)
}

// handle forwards one call of any kind: messages flow both ways until the
// upstream side ends, and its status and trailer go back to the client.
func (p *Proxy) handle(_ any, in grpc.ServerStream) error {
	full, ok := grpc.MethodFromServerStream(in)
	if !ok {
		return status.Error(codes.Internal, "criproxy: no method on the stream")
	}
	if err := p.admit(full); err != nil {
		return err
	}
	if h := p.held(full); h != nil {
		return p.forwardHeld(h, full, in)
	}
	ctx, cancel := context.WithCancel(in.Context())
	defer cancel()
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		ctx = metadata.NewOutgoingContext(ctx, md.Copy())
	}
	out, err := p.upstream.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, full)
	if err != nil {
		return err
	}
	go func() {
		// Client → upstream. An error here (the client went away) cancels
		// ctx through the server stream; the loop below then ends.
		for {
			f := &frame{}
			if err := in.RecvMsg(f); err != nil {
				_ = out.CloseSend()
				return
			}
			if err := out.SendMsg(f); err != nil {
				return
			}
		}
	}()
	header, err := out.Header()
	if err != nil {
		return err
	}
	if err := in.SendHeader(header); err != nil {
		return err
	}
	for {
		f := &frame{}
		if err := out.RecvMsg(f); err != nil {
			in.SetTrailer(out.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := in.SendMsg(f); err != nil {
			return err
		}
	}
}
