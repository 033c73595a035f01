package node

import (
	"context"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/pluginapi"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Re-subscription back-off after the runtime's event stream ends.
const (
	eventsRetryInitial = 500 * time.Millisecond
	eventsRetryMax     = 30 * time.Second
)

// followRuntimeEvents makes the PLEG relist as soon as the runtime plugin
// pushes a change (a container exited, a sandbox died), so that such
// changes reach the pods without waiting for the periodic relist, which
// stays as the fallback. Plugins without the runtime.events capability are
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

// relistOnEvents asks for a relist on each event of one stream, until the
// stream ends. It reports whether any event arrived. While the stream is
// open the periodic relist slows to the safety net (plegperiod.go); its
// opening asks for a relist, which finds what changed while no stream was
// open, and so does its end, which brings the fast period back.
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
		if _, err := stream.Recv(); err != nil {
			return received, err
		}
		received = true
		n.askRelist()
	}
}
