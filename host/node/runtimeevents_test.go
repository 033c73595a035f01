package node

import (
	"context"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// eventsClient serves a fixed number of events, then ends the stream, or
// first waits for hold to close when it is set.
type eventsClient struct {
	runtimev1.RuntimeClient
	events int
	labels map[string]string // of every event
	hold   chan struct{}
}

func (c *eventsClient) Events(context.Context, *runtimev1.EventsRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimev1.Event], error) {
	return &eventStream{left: c.events, labels: c.labels, hold: c.hold}, nil
}

type eventStream struct {
	grpc.ClientStream
	left   int
	labels map[string]string
	hold   chan struct{}
}

func (s *eventStream) Recv() (*runtimev1.Event, error) {
	if s.left == 0 {
		if s.hold != nil {
			<-s.hold
		}
		return nil, io.EOF
	}
	s.left--
	return &runtimev1.Event{Type: runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, Labels: s.labels}, nil
}

func (s *eventStream) Header() (metadata.MD, error) { return nil, nil }

// newEventsNode is a node with a PLEG over a runtime holding pod "1"
// (p/ns, container c), enough to follow an event stream.
func newEventsNode() (*Node, *lifecycle.Cache) {
	rt := lifecycletest.NewFakeRuntime()
	rt.AddPod("1", "p", "ns", "c")
	cache := lifecycle.NewCache()
	return &Node{relist: make(chan struct{}, 1), pleg: lifecycle.NewPLEG(rt, cache, lifecycletest.NewFakeClock(time.Unix(100, 0)), nil)}, cache
}

func TestRelistOnEvents(t *testing.T) {
	podLabels := map[string]string{runtimemanager.LabelPodUID: "1", runtimemanager.LabelPodName: "p", runtimemanager.LabelPodNamespace: "ns"}
	for _, tc := range []struct {
		name         string
		events       int
		labels       map[string]string
		wantReceived bool
		wantInspect  bool
	}{
		{"an event naming no pod asks for a relist", 3, nil, true, false},
		{"an event naming a pod asks for its inspection", 3, podLabels, true, true},
		// Its opening and end do, to catch up with what no stream showed.
		{"an empty stream asks for one", 0, nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, cache := newEventsNode()
			received, err := n.relistOnEvents(t.Context(), &eventsClient{events: tc.events, labels: tc.labels})
			if err != io.EOF || received != tc.wantReceived {
				t.Fatalf("relistOnEvents = %v, %v; want %v, EOF", received, err, tc.wantReceived)
			}
			select {
			case <-n.relist:
			default:
				t.Error("no relist asked for at the stream's opening and end")
			}
			select {
			case <-n.pleg.Requested():
				if !tc.wantInspect {
					t.Error("inspection asked for without an event naming a pod")
				}
				n.pleg.InspectRequested(t.Context())
				if st, err := cache.Get("1"); err != nil || st.Name != "p" || st.Container("c") == nil {
					t.Errorf("cache after the inspection: %+v, %v; want pod 1 (p/ns) with container c", st, err)
				}
			default:
				if tc.wantInspect {
					t.Error("no inspection asked for after events naming a pod")
				}
			}
			if n.eventsLive.Load() {
				t.Error("the stream ended, but the PLEG keeps the safety-net period")
			}
		})
	}
}

func TestOpenEventStreamSlowsTheRelist(t *testing.T) {
	n, _ := newEventsNode()
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

func TestEventHint(t *testing.T) {
	for _, tc := range []struct {
		typ  runtimev1.EventType
		want lifecycle.Hint
	}{
		{runtimev1.EventType_EVENT_TYPE_CONTAINER_CREATED, lifecycle.Hint{ContainerID: "c", State: lifecycle.ContainerCreated}},
		{runtimev1.EventType_EVENT_TYPE_CONTAINER_STARTED, lifecycle.Hint{ContainerID: "c", State: lifecycle.ContainerRunning}},
		{runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, lifecycle.Hint{ContainerID: "c", State: lifecycle.ContainerExited}},
		{runtimev1.EventType_EVENT_TYPE_CONTAINER_REMOVED, lifecycle.Hint{ContainerID: "c", Removed: true}},
		{runtimev1.EventType_EVENT_TYPE_SANDBOX_READY, lifecycle.Hint{}},
		{runtimev1.EventType_EVENT_TYPE_SANDBOX_REMOVED, lifecycle.Hint{}},
		{runtimev1.EventType(99), lifecycle.Hint{}},
	} {
		if got := eventHint(&runtimev1.Event{Type: tc.typ, SandboxId: "s", ContainerId: "c"}); got != tc.want {
			t.Errorf("%v: hint %+v; want %+v", tc.typ, got, tc.want)
		}
	}
}
