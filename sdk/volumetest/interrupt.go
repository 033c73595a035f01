package volumetest

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/podhost/podhost/sdk/internal/midway"
)

// Where a call can be interrupted: midway (at sdk.Midway, or at the hook
// Setup.Midway points at) or after the plugin's handler returned, when its
// answer is lost.
const (
	atMidway = "midway"
	atEnd    = "end"
)

// interrupter serves the plugin's Stage and Publish for the kit, as a gRPC
// interceptor, and lets a check end the context of one once the call
// reached a point, as a host whose deadline expires mid-call does. It
// records what the plugin answered to a call interrupted midway.
type interrupter struct {
	timeout time.Duration

	mu       sync.Mutex
	at       string             // the armed point; empty when none is
	cancel   context.CancelFunc // ends the armed call's client context
	reached  chan struct{}      // closed when the armed point is reached
	answered bool               // a call interrupted midway returned
	answer   error              // what it returned
	running  sync.WaitGroup     // Stage and Publish handlers still running
}

// arm makes the next call that reaches point at end the client context
// cancel belongs to. reached is closed when it happens.
func (i *interrupter) arm(at string, cancel context.CancelFunc) (reached <-chan struct{}) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.at, i.cancel, i.reached = at, cancel, make(chan struct{})
	i.answered, i.answer = false, nil
	return i.reached
}

// point is called by a handler at point at. When the kit armed it, point
// ends the caller's context and waits for the handler's own context to
// end, so that the plugin sees the interruption where it is. It reports
// whether it interrupted the call.
func (i *interrupter) point(ctx context.Context, at string) bool {
	i.mu.Lock()
	armed := i.at != "" && i.at == at
	if armed {
		i.at = ""
		close(i.reached)
		i.cancel()
	}
	i.mu.Unlock()
	if !armed {
		return false
	}
	select {
	case <-ctx.Done():
	case <-time.After(i.timeout):
	}
	return true
}

// midwayHook is the function the kit installs as the plugin's Setup.Midway: it
// calls the hook the call's context carries, as sdk.Midway does.
func midwayHook(ctx context.Context) { midway.Call(ctx) }

// wait waits for the Stage and Publish handlers still running to return,
// and reports false if they do not within the call timeout.
func (i *interrupter) wait() bool {
	done := make(chan struct{})
	go func() { i.running.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(i.timeout):
		return false
	}
}

// midwayAnswer returns what the call interrupted midway answered, and
// whether one did.
func (i *interrupter) midwayAnswer() (error, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.answer, i.answered
}

// intercept runs one call of the plugin. Stage and Publish are counted as
// running, carry the midway hook in their context, and pass the point
// after they answered.
func (i *interrupter) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !strings.HasSuffix(info.FullMethod, "/Stage") && !strings.HasSuffix(info.FullMethod, "/Publish") {
		return handler(ctx, req)
	}
	i.running.Add(1)
	defer i.running.Done()
	var interrupted atomic.Bool
	ctx = midway.With(ctx, func(ctx context.Context) {
		if i.point(ctx, atMidway) {
			interrupted.Store(true)
		}
	})
	resp, err := handler(ctx, req)
	if interrupted.Load() {
		i.mu.Lock()
		i.answered, i.answer = true, err
		i.mu.Unlock()
	}
	i.point(ctx, atEnd)
	return resp, err
}
