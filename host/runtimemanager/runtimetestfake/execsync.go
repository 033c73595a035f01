package runtimetestfake

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// ExecSync runs a command in a running container through ExecSyncFunc, or the
// built-in "true" and "false". ExecSyncFunc runs without the fake's lock.
func (f *Fake) ExecSync(ctx context.Context, req *runtimev1.ExecSyncRequest) (*runtimev1.ExecSyncResponse, error) {
	resp, err := do(f, ctx, "ExecSync", req, func() (*runtimev1.ExecSyncResponse, error) {
		switch {
		case req.GetContainerId() == "":
			return nil, invalid("container id is empty")
		case len(req.GetCmd()) == 0:
			return nil, invalid("command is empty")
		}
		c, ok := f.containers[req.GetContainerId()]
		switch {
		case !ok:
			return nil, notFound("container %q", req.GetContainerId())
		case c.GetState() != runtimev1.ContainerState_CONTAINER_STATE_RUNNING:
			return nil, status.Errorf(codes.FailedPrecondition, "container %q is not running", c.GetId())
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	if resp != nil {
		return resp, nil
	}
	if f.ExecSyncFunc != nil {
		return f.ExecSyncFunc(ctx, req.GetContainerId(), req.GetCmd())
	}
	switch req.GetCmd()[0] {
	case "true":
		return &runtimev1.ExecSyncResponse{}, nil
	case "false":
		return &runtimev1.ExecSyncResponse{ExitCode: 1}, nil
	}
	return &runtimev1.ExecSyncResponse{Stderr: []byte(req.GetCmd()[0] + ": not found\n"), ExitCode: 127}, nil
}

func (d direct) ExecSync(ctx context.Context, req *runtimev1.ExecSyncRequest, _ ...grpc.CallOption) (*runtimev1.ExecSyncResponse, error) {
	return d.f.ExecSync(ctx, req)
}
