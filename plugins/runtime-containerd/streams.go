package main

import (
	"context"
	"fmt"
	"strings"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Exec maps the contract's call onto CRI's.
func (s *server) Exec(ctx context.Context, req *runtimev1.ExecRequest) (*runtimev1.ExecResponse, error) {
	url, err := s.rt.Exec(ctx, &criapi.ExecRequest{ContainerId: req.GetContainerId(), Cmd: req.GetCmd(),
		Tty: req.GetTty(), Stdin: req.GetStdin(), Stdout: req.GetStdout(), Stderr: req.GetStderr()})
	return reply(&runtimev1.ExecResponse{Url: url}, err)
}

// Attach maps the contract's call onto CRI's.
func (s *server) Attach(ctx context.Context, req *runtimev1.AttachRequest) (*runtimev1.AttachResponse, error) {
	url, err := s.rt.Attach(ctx, &criapi.AttachRequest{ContainerId: req.GetContainerId(),
		Tty: req.GetTty(), Stdin: req.GetStdin(), Stdout: req.GetStdout(), Stderr: req.GetStderr()})
	return reply(&runtimev1.AttachResponse{Url: url}, err)
}

// PortForward maps the contract's call onto CRI's.
func (s *server) PortForward(ctx context.Context, req *runtimev1.PortForwardRequest) (*runtimev1.PortForwardResponse, error) {
	url, err := s.rt.PortForward(ctx, req.GetSandboxId(), req.GetPorts())
	return reply(&runtimev1.PortForwardResponse{Url: url}, err)
}

// checkStreams refuses what CRI's streaming server would refuse with a
// message less clear: no stream at all, or a terminal with stderr.
func checkStreams(tty, stdin, stdout, stderr bool) error {
	switch {
	case !stdin && !stdout && !stderr:
		return fmt.Errorf("%w: one of stdin, stdout and stderr is required", errInvalid)
	case tty && stderr:
		return fmt.Errorf("%w: tty and stderr cannot both be set (a terminal has one output stream)", errInvalid)
	}
	return nil
}

// Exec asks containerd's streaming server for an exec URL. containerd 1.6
// refuses a container that is not running with UNKNOWN "container is in
// CONTAINER_EXITED state": the contract's FAILED_PRECONDITION.
func (r *criRuntime) Exec(ctx context.Context, req *criapi.ExecRequest) (string, error) {
	switch {
	case req.ContainerId == "":
		return "", fmt.Errorf("%w: container_id is required", errInvalid)
	case len(req.Cmd) == 0:
		return "", fmt.Errorf("%w: cmd is required", errInvalid)
	}
	if err := checkStreams(req.Tty, req.Stdin, req.Stdout, req.Stderr); err != nil {
		return "", err
	}
	return streamURL(ctx, r, "exec in container "+req.ContainerId, func(ctx context.Context, rt criapi.RuntimeServiceClient) (*criapi.ExecResponse, error) {
		return rt.Exec(ctx, req)
	})
}

// Attach asks containerd's streaming server for an attach URL.
func (r *criRuntime) Attach(ctx context.Context, req *criapi.AttachRequest) (string, error) {
	if req.ContainerId == "" {
		return "", fmt.Errorf("%w: container_id is required", errInvalid)
	}
	if err := checkStreams(req.Tty, req.Stdin, req.Stdout, req.Stderr); err != nil {
		return "", err
	}
	return streamURL(ctx, r, "attach to container "+req.ContainerId, func(ctx context.Context, rt criapi.RuntimeServiceClient) (*criapi.AttachResponse, error) {
		return rt.Attach(ctx, req)
	})
}

// PortForward asks containerd's streaming server for a port-forward URL
// into the sandbox's network namespace.
func (r *criRuntime) PortForward(ctx context.Context, sandboxID string, ports []int32) (string, error) {
	if sandboxID == "" {
		return "", fmt.Errorf("%w: sandbox_id is required", errInvalid)
	}
	for _, p := range ports {
		if p <= 0 || p > 65535 {
			return "", fmt.Errorf("%w: port %d is not a TCP port", errInvalid, p)
		}
	}
	return streamURL(ctx, r, "port-forward to sandbox "+sandboxID, func(ctx context.Context, rt criapi.RuntimeServiceClient) (*criapi.PortForwardResponse, error) {
		return rt.PortForward(ctx, &criapi.PortForwardRequest{PodSandboxId: sandboxID, Port: ports})
	})
}

// streamURL makes one streaming call with the runtime timeout and returns
// the URL containerd answered.
func streamURL[T interface{ GetUrl() string }](ctx context.Context, r *criRuntime, op string, call func(context.Context, criapi.RuntimeServiceClient) (T, error)) (string, error) {
	b, err := r.backend()
	if err != nil {
		return "", err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	resp, err := call(ctx, b.rt)
	if err != nil {
		return "", streamError(op, err)
	}
	return resp.GetUrl(), nil
}

// streamError classifies a streaming call's error; containerd says a
// container or sandbox is in the wrong state only in its message.
func streamError(op string, err error) error {
	err = criError(op, err)
	if be, ok := err.(*backendError); ok && be.class == errBackend {
		if msg := be.msg; strings.Contains(msg, "not running") || strings.Contains(msg, "not ready") ||
			strings.Contains(msg, "CONTAINER_EXITED") || strings.Contains(msg, "CONTAINER_CREATED") ||
			strings.Contains(msg, "CONTAINER_UNKNOWN") || strings.Contains(msg, "SANDBOX_NOTREADY") {
			be.class = errPrecondition
		}
	}
	return err
}
