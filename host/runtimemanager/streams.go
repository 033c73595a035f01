package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// ErrNoStreaming: the runtime plugin does not serve Exec, Attach or
// PortForward (it answered UNIMPLEMENTED).
var ErrNoStreaming = errors.New("the runtime plugin does not serve streaming")

// Streams are the streams a client of Exec or Attach asks for.
type Streams struct {
	Stdin, Stdout, Stderr, TTY bool
}

// ExecURL asks the runtime where to run cmd in the pod's running
// container name: a single-use URL on the runtime's streaming server. A
// container the pod does not have, or that does not run, is ErrNotFound
// or ErrRejected naming it.
func (m *Manager) ExecURL(ctx context.Context, uid types.UID, name string, cmd []string, s Streams) (*url.URL, error) {
	id, err := m.runningContainer(ctx, uid, name)
	if err != nil {
		return nil, err
	}
	resp, err := m.rt.Exec(ctx, &runtimev1.ExecRequest{ContainerId: id, Cmd: cmd,
		Tty: s.TTY, Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr})
	if err != nil {
		return nil, streamError("exec in container "+name, err)
	}
	return parseStreamURL(resp.GetUrl())
}

// AttachURL asks the runtime where to attach to the pod's running
// container name, as ExecURL.
func (m *Manager) AttachURL(ctx context.Context, uid types.UID, name string, s Streams) (*url.URL, error) {
	id, err := m.runningContainer(ctx, uid, name)
	if err != nil {
		return nil, err
	}
	resp, err := m.rt.Attach(ctx, &runtimev1.AttachRequest{ContainerId: id,
		Tty: s.TTY, Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr})
	if err != nil {
		return nil, streamError("attach to container "+name, err)
	}
	return parseStreamURL(resp.GetUrl())
}

// PortForwardURL asks the runtime where to forward connections into the
// pod's ready sandbox; ports, when not empty, are the only ones allowed.
func (m *Manager) PortForwardURL(ctx context.Context, uid types.UID, ports []int32) (*url.URL, error) {
	st, err := m.podState(ctx, uid)
	if err != nil {
		return nil, err
	}
	sb := st.newestSandbox()
	switch {
	case sb == nil:
		return nil, fmt.Errorf("port-forward: the pod has no sandbox: %w", ErrNotFound)
	case !sb.ready:
		return nil, fmt.Errorf("port-forward: the pod's sandbox is not ready: %w", ErrRejected)
	}
	resp, err := m.rt.PortForward(ctx, &runtimev1.PortForwardRequest{SandboxId: sb.id, Ports: ports})
	if err != nil {
		return nil, streamError("port-forward", err)
	}
	return parseStreamURL(resp.GetUrl())
}

// runningContainer returns the ID of the pod's newest container name in
// its newest sandbox, when it runs.
func (m *Manager) runningContainer(ctx context.Context, uid types.UID, name string) (string, error) {
	states, err := m.list(ctx, podSelector(string(uid)))
	if err != nil {
		return "", err
	}
	st, ok := states[uid]
	var c *containerInfo
	if ok {
		sandbox := ""
		if sb := st.newestSandbox(); sb != nil {
			sandbox = sb.id
		}
		c = st.newest(name, sandbox)
	}
	switch {
	case c == nil:
		return "", fmt.Errorf("container %q: %w", name, ErrNotFound)
	case c.state != lifecycle.ContainerRunning:
		return "", fmt.Errorf("container %q is not running: %w", name, ErrRejected)
	}
	return c.id, nil
}

func streamError(op string, err error) error {
	if status.Code(err) == codes.Unimplemented {
		return fmt.Errorf("%s: %w", op, ErrNoStreaming)
	}
	return callError(op, err)
}

// parseStreamURL checks the runtime's answer: an absolute http or https
// URL the host can dial.
func parseStreamURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the runtime's streaming URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the runtime's streaming URL %q is not an absolute http or https URL", raw)
	}
	return u, nil
}
