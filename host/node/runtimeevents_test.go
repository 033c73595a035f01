package node

import (
	"context"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// eventsClient serves a fixed number of events, then ends the stream, or
// first waits for hold to close when it is set.
type eventsClient struct {
	runtimev1.RuntimeClient
	events int
	hold   chan struct{}
}

func (c *eventsClient) Events(context.Context, *runtimev1.EventsRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimev1.Event], error) {
	return &eventStream{left: c.events, hold: c.hold}, nil
}

type eventStream struct {
	grpc.ClientStream
	left int
	hold chan struct{}
}

func (s *eventStream) Recv() (*runtimev1.Event, error) {
	if s.left == 0 {
		if s.hold != nil {
			<-s.hold
		}
		return nil, io.EOF
	}
	s.left--
	return &runtimev1.Event{Type: runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED}, nil
}

func (s *eventStream) Header() (metadata.MD, error) { return nil, nil }

func TestRelistOnEvents(t *testing.T) {
	for _, tc := range []struct {
		name         string
		events       int
		wantReceived bool
		wantRelist   bool
	}{
		{"an event asks for a relist", 3, true, true},
		// Its opening and end do, to catch up with what no stream showed.
		{"an empty stream asks for one", 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &Node{relist: make(chan struct{}, 1)}
			received, err := n.relistOnEvents(t.Context(), &eventsClient{events: tc.events})
			if err != io.EOF || received != tc.wantReceived {
				t.Fatalf("relistOnEvents = %v, %v; want %v, EOF", received, err, tc.wantReceived)
			}
			select {
			case <-n.relist:
				if !tc.wantRelist {
					t.Error("relist asked for without an event")
				}
			default:
				if tc.wantRelist {
					t.Error("no relist asked for after events")
				}
			}
			if n.eventsLive.Load() {
				t.Error("the stream ended, but the PLEG keeps the safety-net period")
			}
		})
	}
}

func TestOpenEventStreamSlowsTheRelist(t *testing.T) {
	n := &Node{relist: make(chan struct{}, 1)}
	hold := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := n.relistOnEvents(t.Context(), &eventsClient{hold: hold})
		done <- err
	}()
	<-n.relist // the opening asks for a catch-up relist
	if !n.eventsLive.Load() {
		t.Error("the stream is open, but the PLEG keeps the fast period")
	}
	close(hold)
	if err := <-done; err != io.EOF {
		t.Fatalf("relistOnEvents: %v; want EOF", err)
	}
	if n.eventsLive.Load() {
		t.Error("the stream ended, but the PLEG keeps the safety-net period")
	}
	select {
	case <-n.relist:
	default:
		t.Error("the stream's end asked for no relist")
	}
}
