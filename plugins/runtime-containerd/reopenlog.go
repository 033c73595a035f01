package main

import (
	"context"
	"fmt"
	"strings"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// ReopenContainerLog maps the contract's call onto CRI's.
func (s *server) ReopenContainerLog(ctx context.Context, req *runtimev1.ReopenContainerLogRequest) (*runtimev1.ReopenContainerLogResponse, error) {
	return reply(&runtimev1.ReopenContainerLogResponse{}, s.rt.ReopenContainerLog(ctx, req.GetContainerId()))
}

// ReopenContainerLog makes containerd reopen a running container's log
// file, after the host renamed it. containerd 1.6 refuses a container that
// is not running with UNKNOWN "container is not running", which is the
// contract's FAILED_PRECONDITION.
func (r *criRuntime) ReopenContainerLog(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("%w: container_id is required", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	_, err = b.rt.ReopenContainerLog(ctx, &criapi.ReopenContainerLogRequest{ContainerId: id})
	err = criError("reopen log of container "+id, err)
	if be, ok := err.(*backendError); ok && be.class == errBackend && strings.Contains(be.msg, "not running") {
		be.class = errPrecondition
	}
	return err
}
