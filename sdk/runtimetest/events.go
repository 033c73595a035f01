package runtimetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"

	"google.golang.org/grpc/codes"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// wantEvent is one event the Events check expects.
type wantEvent struct {
	typ         runtimev1.EventType
	sandboxID   string
	containerID string
	labels      map[string]string
}

func (w wantEvent) String() string {
	return fmt.Sprintf("%v sandbox %q container %q", w.typ, w.sandboxID, w.containerID)
}

func (w wantEvent) matches(ev *runtimev1.Event) bool {
	return ev.GetType() == w.typ && ev.GetSandboxId() == w.sandboxID && ev.GetContainerId() == w.containerID
}

// checkEvents opens the stream, waits for its header (a plugin sends it
// once it is subscribed, so no later change is missed), takes a sandbox and
// a container through their lives and expects their events in order. Other
// events, and repeats, are ignored.
func checkEvents(k *kit) {
	ctx, cancel := context.WithTimeout(k.Context(), k.setup.CallTimeout)
	defer cancel()
	stream, err := k.rt.Events(ctx, &runtimev1.EventsRequest{})
	k.mustOK("Events", err)
	if _, err := stream.Header(); err != nil {
		k.Fatalf("Events: waiting for the stream header: %v; a plugin sends it once subscribed", err)
	}

	image := k.ensureImage()
	sb, sbCfg := k.runSandbox("events", nil)
	c, cCfg := k.createContainer(sb, sbCfg, "app", image, nil)
	k.mustOK("StartContainer", k.start(c)())
	k.mustOK("StopContainer", k.stop(c)())
	_, err = k.rt.RemoveContainer(k.ctx(), &runtimev1.RemoveContainerRequest{ContainerId: c})
	k.mustOK("RemoveContainer", err)
	_, err = k.rt.StopSandbox(k.ctx(), &runtimev1.StopSandboxRequest{SandboxId: sb})
	k.mustOK("StopSandbox", err)
	_, err = k.rt.RemoveSandbox(k.ctx(), &runtimev1.RemoveSandboxRequest{SandboxId: sb})
	k.mustOK("RemoveSandbox", err)

	want := []wantEvent{
		{runtimev1.EventType_EVENT_TYPE_SANDBOX_READY, sb, "", sbCfg.GetLabels()},
		{runtimev1.EventType_EVENT_TYPE_CONTAINER_CREATED, sb, c, cCfg.GetLabels()},
		{runtimev1.EventType_EVENT_TYPE_CONTAINER_STARTED, sb, c, cCfg.GetLabels()},
		{runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, sb, c, cCfg.GetLabels()},
		{runtimev1.EventType_EVENT_TYPE_CONTAINER_REMOVED, sb, c, cCfg.GetLabels()},
		{runtimev1.EventType_EVENT_TYPE_SANDBOX_NOTREADY, sb, "", sbCfg.GetLabels()},
		{runtimev1.EventType_EVENT_TYPE_SANDBOX_REMOVED, sb, "", sbCfg.GetLabels()},
	}
	for len(want) > 0 {
		ev, err := stream.Recv()
		if err != nil {
			k.Fatalf("Events: got %v while waiting for %v", err, want[0])
		}
		if !want[0].matches(ev) {
			continue
		}
		if !maps.Equal(ev.GetLabels(), want[0].labels) {
			k.Errorf("Events %v: got labels %v; want %v", want[0], ev.GetLabels(), want[0].labels)
		}
		if ev.GetTimestamp() <= 0 {
			k.Errorf("Events %v: got timestamp %d; want a time", want[0], ev.GetTimestamp())
		}
		want = want[1:]
	}
}

func checkEventsUnimplemented(k *kit) {
	stream, err := k.rt.Events(k.ctx(), &runtimev1.EventsRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	k.wantCode("Events of a plugin without runtime.events", err, codes.Unimplemented)
}
