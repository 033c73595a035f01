package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/lifecycle"
)

// Execer runs a command in a container: the runtime manager.
type Execer interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (runtimemanager.ExecResult, error)
}

// Runner runs probes and hooks. The zero value is not usable; call New.
type Runner struct {
	exec Execer
	http *httpProber
	// userAgent is sent by httpGet probes and hooks without their own.
	userAgent string
}

// Options configure a Runner.
type Options struct {
	// Exec runs exec probes and hooks; nil makes them fail with an error.
	Exec Execer
	// UserAgent is the User-Agent of httpGet probes; empty means
	// "kube-probe/podhost".
	UserAgent string
}

// New returns a Runner.
func New(opts Options) *Runner {
	ua := opts.UserAgent
	if ua == "" {
		ua = "kube-probe/podhost"
	}
	return &Runner{exec: opts.Exec, http: newHTTPProber(), userAgent: ua}
}

// errNoHandler is a probe or hook with no handler podhost can run.
var errNoHandler = errors.New("no handler to run")

// RunProbe runs one probe; ctx bounds the call (an exec probe's
// timeoutSeconds the runtime enforces, ctx leaves it the time to). A probe that ran and
// failed is ProbeFailure with its output; an error means the probe could
// not be judged.
func (r *Runner) RunProbe(ctx context.Context, t lifecycle.ProbeTarget) (lifecycle.ProbeResult, string, error) {
	h := t.Probe.ProbeHandler
	timeout := time.Duration(t.Probe.TimeoutSeconds) * time.Second
	switch {
	case h.Exec != nil:
		return r.execProbe(ctx, t.ContainerID, runtimemanager.ExpandStatic(t.Container, h.Exec.Command), timeout)
	case h.HTTPGet != nil:
		host, port, err := address(t.Pod, t.Container, t.PodIP, h.HTTPGet.Host, h.HTTPGet.Port)
		if err != nil {
			return lifecycle.ProbeUnknown, "", err
		}
		return r.http.probe(ctx, h.HTTPGet, host, port, r.userAgent)
	case h.TCPSocket != nil:
		host, port, err := address(t.Pod, t.Container, t.PodIP, h.TCPSocket.Host, h.TCPSocket.Port)
		if err != nil {
			return lifecycle.ProbeUnknown, "", err
		}
		return tcpProbe(ctx, net.JoinHostPort(host, strconv.Itoa(port)))
	case h.GRPC != nil:
		host, _, err := address(t.Pod, t.Container, t.PodIP, "", intstr.FromInt32(h.GRPC.Port))
		if err != nil {
			return lifecycle.ProbeUnknown, "", err
		}
		service := ""
		if h.GRPC.Service != nil {
			service = *h.GRPC.Service
		}
		return grpcProbe(ctx, net.JoinHostPort(host, strconv.Itoa(int(h.GRPC.Port))), service)
	}
	return lifecycle.ProbeUnknown, "", fmt.Errorf("%s probe of container %q: %w", t.Kind, t.Container.Name, errNoHandler)
}

// address resolves where a probe connects: host if the probe names one,
// else the pod's IP, else (a host-network pod whose runtime reports none)
// the loopback address; port by number or by the name of one of the
// container's ports.
func address(pod *v1.Pod, c *v1.Container, podIP, host string, port intstr.IntOrString) (string, int, error) {
	n, err := resolvePort(c, port)
	if err != nil {
		return "", 0, err
	}
	switch {
	case host != "":
		return host, n, nil
	case podIP != "":
		return podIP, n, nil
	case pod.Spec.HostNetwork:
		return "127.0.0.1", n, nil
	}
	return "", 0, fmt.Errorf("pod %s/%s has no IP yet", pod.Namespace, pod.Name)
}

// resolvePort turns a port number or name into a number.
func resolvePort(c *v1.Container, port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		if n := port.IntValue(); n > 0 && n < 65536 {
			return n, nil
		}
		return 0, fmt.Errorf("invalid port number %d", port.IntValue())
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %q has no port named %q", c.Name, port.StrVal)
}
