package node

import (
	"context"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// eventsClient serves a fixed number of events, then ends the stream.
type eventsClient struct {
	runtimev1.RuntimeClient
	events int
}

func (c *eventsClient) Events(context.Context, *runtimev1.EventsRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimev1.Event], error) {
	return &eventStream{left: c.events}, nil
}

type eventStream struct {
	grpc.ClientStream
	left int
}

func (s *eventStream) Recv() (*runtimev1.Event, error) {
	if s.left == 0 {
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
		{"an empty stream asks for none", 0, false, false},
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
		})
	}
}
