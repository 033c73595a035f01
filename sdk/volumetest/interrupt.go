package volumetest

import (
	"context"
	"sync"
	"time"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// Where a call can be interrupted: midway (at the plugin's Setup.Midway
// hook) or after the plugin's handler returned, when its answer is lost.
const (
	atMidway = "midway"
	atEnd    = "end"
)

// interrupter serves the plugin's Volume service for the kit and lets a
// check end the context of a Stage or Publish once the call reached a
// point, as a host whose deadline expires mid-call does.
type interrupter struct {
	volumev1.VolumeServer
	timeout time.Duration

	mu      sync.Mutex
	at      string             // the armed point; empty when none is
	cancel  context.CancelFunc // ends the armed call's client context
	reached chan struct{}      // closed when the armed point is reached
	running sync.WaitGroup     // Stage and Publish handlers still running
}

// arm makes the next call that reaches point at end the client context
// cancel belongs to. reached is closed when it happens.
func (i *interrupter) arm(at string, cancel context.CancelFunc) (reached <-chan struct{}) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.at, i.cancel, i.reached = at, cancel, make(chan struct{})
	return i.reached
}

// point is called by a handler at point at. When the kit armed it, point
// ends the caller's context and waits for the handler's own context to
// end, so that the plugin sees the interruption where it is.
func (i *interrupter) point(ctx context.Context, at string) {
	i.mu.Lock()
	armed := i.at != "" && i.at == at
	if armed {
		i.at = ""
		close(i.reached)
		i.cancel()
	}
	i.mu.Unlock()
	if !armed {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(i.timeout):
	}
}

// midway is the function the kit installs as the plugin's Setup.Midway.
func (i *interrupter) midway(ctx context.Context) { i.point(ctx, atMidway) }

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

// handle runs one Stage or Publish of the plugin, counted as running, and
// passes the point after it answered.
func handle[Req, Resp any](ctx context.Context, i *interrupter, req Req, call func(context.Context, Req) (Resp, error)) (Resp, error) {
	i.running.Add(1)
	defer i.running.Done()
	resp, err := call(ctx, req)
	i.point(ctx, atEnd)
	return resp, err
}

func (i *interrupter) Stage(ctx context.Context, req *volumev1.StageRequest) (*volumev1.StageResponse, error) {
	return handle(ctx, i, req, i.VolumeServer.Stage)
}

func (i *interrupter) Publish(ctx context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
	return handle(ctx, i, req, i.VolumeServer.Publish)
}
