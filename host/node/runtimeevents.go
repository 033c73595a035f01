package node

import (
	"context"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/pluginapi"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Re-subscription back-off after the runtime's event stream ends.
const (
	eventsRetryInitial = 500 * time.Millisecond
	eventsRetryMax     = 30 * time.Second
)

// followRuntimeEvents makes the PLEG inspect a pod as soon as the runtime
// plugin pushes a change of it (a container exited, a sandbox died), so
// that such changes reach the pods without waiting for the periodic
// relist, which stays as the fallback. Plugins without the runtime.events capability are
// left to the relist. The stream ends with its plugin; it is opened again,
// with back-off, on the plugin's next instance.
func (n *Node) followRuntimeEvents(ctx context.Context) {
	st, err := n.cfg.Plugins.Status(n.cfg.RuntimePlugin)
	if err != nil || !slices.Contains(st.Capabilities, pluginapi.CapRuntimeEvents) {
		n.log.Debug("runtime plugin pushes no events; relisting only", "plugin", n.cfg.RuntimePlugin)
		return
	}
	client, err := n.cfg.Plugins.Runtime(n.cfg.RuntimePlugin)
	if err != nil {
		n.log.Warn("runtime events", "plugin", n.cfg.RuntimePlugin, "err", err)
		return
	}
	retry := eventsRetryInitial
	for {
		received, err := n.relistOnEvents(ctx, client)
		if ctx.Err() != nil {
			return
		}
		if status.Code(err) == codes.Unimplemented {
			n.log.Warn("runtime plugin declares events but does not serve them; relisting only", "plugin", n.cfg.RuntimePlugin)
			return
		}
		if received {
			retry = eventsRetryInitial
		}
		n.log.Debug("runtime event stream ended; subscribing again", "plugin", n.cfg.RuntimePlugin, "in", retry, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
		retry = min(2*retry, eventsRetryMax)
	}
}

// relistOnEvents asks the PLEG to inspect the pod each event of one stream
// names (the kubelet's Evented PLEG updates the one pod an event names),
// or to relist on an event that names none, until the stream ends. It
// reports whether any event arrived. While the stream is open the
// periodic relist slows to the safety net (plegperiod.go); its opening
// asks for a relist, which finds what changed while no stream was open,
// and so does its end, which brings the fast period back.
func (n *Node) relistOnEvents(ctx context.Context, client runtimev1.RuntimeClient) (bool, error) {
	stream, err := client.Events(ctx, &runtimev1.EventsRequest{})
	if err != nil {
		return false, err
	}
	// The plugin sends the header once it follows its backend.
	if _, err := stream.Header(); err != nil {
		return false, err
	}
	n.eventsLive.Store(true)
	n.askRelist()
	defer func() {
		n.eventsLive.Store(false)
		n.askRelist()
	}()
	received := false
	for {
		ev, err := stream.Recv()
		if err != nil {
			return received, err
		}
		received = true
		if ref, ok := eventPod(ev); ok {
			n.pleg.RequestEvent(ref, eventHint(ev))
		} else {
			n.askRelist()
		}
	}
}

// eventHint is what an event tells of its pod, for the PLEG to judge
// whether its view already shows it (the plugin reports the host's own
// calls too). Sandbox events and unknown types hint nothing.
func eventHint(ev *runtimev1.Event) lifecycle.Hint {
	h := lifecycle.Hint{ContainerID: ev.GetContainerId()}
	switch ev.GetType() {
	case runtimev1.EventType_EVENT_TYPE_CONTAINER_CREATED:
		h.State = lifecycle.ContainerCreated
	case runtimev1.EventType_EVENT_TYPE_CONTAINER_STARTED:
		h.State = lifecycle.ContainerRunning
	case runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED:
		h.State = lifecycle.ContainerExited
	case runtimev1.EventType_EVENT_TYPE_CONTAINER_REMOVED:
		h.Removed = true
	default:
		return lifecycle.Hint{}
	}
	return h
}

// eventPod is the pod an event's labels name, the labels the runtime
// manager puts on every sandbox and container it creates.
func eventPod(ev *runtimev1.Event) (lifecycle.PodRef, bool) {
	l := ev.GetLabels()
	uid := l[runtimemanager.LabelPodUID]
	if uid == "" {
		return lifecycle.PodRef{}, false
	}
	return lifecycle.PodRef{UID: types.UID(uid), Name: l[runtimemanager.LabelPodName], Namespace: l[runtimemanager.LabelPodNamespace]}, true
}
