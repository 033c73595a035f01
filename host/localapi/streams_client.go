package localapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	//lint:ignore SA1019 client-go's executors and port forwarder in v0.37 still take this package's types
	"k8s.io/apimachinery/pkg/util/httpstream"
	//lint:ignore SA1019 client-go's spdy.Upgrader in v0.37 is this package's round tripper
	spdystream "k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport"
	clientspdy "k8s.io/client-go/transport/spdy"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	streamhttp "k8s.io/streaming/pkg/httpstream"
)

// StreamOptions are the streams of an exec or attach. Stdin nil asks for
// no stdin; with TTY, stderr is merged into stdout by the terminal.
type StreamOptions struct {
	// Container is the container; empty: the pod's default container.
	Container      string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	TTY            bool
	// Resize sends the terminal's size with TTY; nil: none.
	Resize remotecommand.TerminalSizeQueue
}

// Exec runs cmd in a container of the pod until it exits or ctx is done.
// A command that ran and exited non-zero is an error that is client-go's
// exec.ExitError with its code.
func (c *Client) Exec(ctx context.Context, namespace, name string, cmd []string, o StreamOptions) error {
	q := streamQuery(o)
	q["command"] = cmd
	return c.remoteCommand(ctx, podPath(namespace, name)+"/exec", q, o)
}

// Attach attaches to the pod's container's streams until it exits or ctx
// is done.
func (c *Client) Attach(ctx context.Context, namespace, name string, o StreamOptions) error {
	return c.remoteCommand(ctx, podPath(namespace, name)+"/attach", streamQuery(o), o)
}

func streamQuery(o StreamOptions) url.Values {
	q := url.Values{}
	if o.Container != "" {
		q.Set("container", o.Container)
	}
	set := func(name string, on bool) {
		if on {
			q.Set(name, "1")
		}
	}
	set("input", o.Stdin != nil)
	set("output", o.Stdout != nil)
	set("error", o.Stderr != nil && !o.TTY)
	set("tty", o.TTY)
	return q
}

func (c *Client) remoteCommand(ctx context.Context, path string, q url.Values, o StreamOptions) error {
	u, err := url.Parse(c.base + path + "?" + q.Encode())
	if err != nil {
		return err
	}
	ex, err := c.executor(u)
	if err != nil {
		return err
	}
	opts := remotecommand.StreamOptions{Stdin: o.Stdin, Stdout: o.Stdout, Tty: o.TTY, TerminalSizeQueue: o.Resize}
	if !o.TTY {
		opts.Stderr = o.Stderr
	}
	return ex.StreamWithContext(ctx, opts)
}

// executor is kubectl's: WebSocket (the v5 protocol, the exit code in its
// status) with SPDY as the fallback when the upgrade is refused. On the
// unix socket it is SPDY alone: client-go's WebSocket transport dials TCP
// itself and takes no dialer.
func (c *Client) executor(u *url.URL) (remotecommand.Executor, error) {
	rt, up, err := c.spdyTransport()
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutorForTransports(rt, up, http.MethodPost, u)
	if err != nil || c.socket != "" {
		return spdy, err
	}
	ws, err := remotecommand.NewWebSocketExecutor(c.restConfig(), http.MethodGet, u.String())
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, fallBack)
}

// fallBack is kubectl's test of a refused WebSocket upgrade. It must be
// k8s.io/streaming's: client-go's WebSocket transport returns that
// package's UpgradeFailureError, which apimachinery's older twin does not
// recognise (with it, a refused WebSocket never fell back to SPDY).
func fallBack(err error) bool {
	return streamhttp.IsUpgradeFailure(err) || streamhttp.IsHTTPSProxyError(err)
}

// spdyTransport upgrades to SPDY over the client's own connection (the
// unix socket or TCP), with the token when there is one.
func (c *Client) spdyTransport() (http.RoundTripper, clientspdy.Upgrader, error) {
	up, err := spdystream.NewRoundTripperWithConfig(spdystream.RoundTripperConfig{
		UpgradeTransport: &http.Transport{DialContext: c.dial},
		PingPeriod:       5 * time.Second,
	})
	if err != nil {
		return nil, nil, err
	}
	var rt http.RoundTripper = up
	if c.token != "" {
		rt = transport.NewBearerAuthRoundTripper(c.token, up)
	}
	return rt, up, nil
}

func (c *Client) restConfig() *rest.Config {
	return &rest.Config{Host: c.base, BearerToken: c.token}
}

// PortForward listens on addresses and ports (kubectl's LOCAL:REMOTE
// forms) and forwards every connection to the pod until ctx is done.
// ready is closed once it listens; out gets a line per port.
func (c *Client) PortForward(ctx context.Context, namespace, name string, addresses, ports []string, ready chan struct{}, out, errOut io.Writer) error {
	u, err := url.Parse(c.base + podPath(namespace, name) + "/portforward")
	if err != nil {
		return err
	}
	rt, up, err := c.spdyTransport()
	if err != nil {
		return err
	}
	var dialer httpstream.Dialer = clientspdy.NewDialer(up, &http.Client{Transport: rt}, http.MethodPost, u)
	if c.socket == "" {
		ws, err := portforward.NewSPDYOverWebsocketDialer(u, c.restConfig())
		if err != nil {
			return err
		}
		dialer = portforward.NewFallbackDialer(ws, dialer, fallBack)
	}
	fw, err := portforward.NewOnAddressesWithContext(ctx, dialer, addresses, ports, ready, out, errOut)
	if err != nil {
		return fmt.Errorf("port-forward: %w", err)
	}
	return fw.ForwardPorts()
}

// StatsSummary is the node's last reading of its numbers.
func (c *Client) StatsSummary(ctx context.Context) (statsapi.Summary, error) {
	var out statsapi.Summary
	return out, c.call(ctx, http.MethodGet, "/v1/stats/summary", nil, nil, &out)
}
