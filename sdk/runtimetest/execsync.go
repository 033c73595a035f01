package runtimetest

import (
	"google.golang.org/grpc/codes"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// checkExecSync runs commands in a container in each of its states: a
// created or exited container is FAILED_PRECONDITION, an unknown one
// NOT_FOUND, a missing id or command INVALID_ARGUMENT, and, when the setup
// names commands, a running container runs them with their exit codes.
func checkExecSync(k *kit) {
	sb, sbCfg := k.runSandbox("exec", nil)
	image := k.ensureImage()
	id, _ := k.createContainer(sb, sbCfg, "app", image, nil)
	exec := func(id string, cmd []string) (*runtimev1.ExecSyncResponse, error) {
		return k.rt.ExecSync(k.ctx(), &runtimev1.ExecSyncRequest{ContainerId: id, Cmd: cmd, TimeoutSeconds: 10})
	}
	cmd := []string{"true"}
	if k.setup.ExecSucceeds != nil {
		cmd = k.setup.ExecSucceeds
	}
	_, err := exec(id, cmd)
	k.wantCode("ExecSync in a created container", err, codes.FailedPrecondition)
	k.mustOK("StartContainer", k.start(id)())
	if k.setup.ExecSucceeds != nil {
		resp, err := exec(id, k.setup.ExecSucceeds)
		if k.wantCode("ExecSync of ExecSucceeds", err, codes.OK) && resp.GetExitCode() != 0 {
			k.Errorf("ExecSync of %q: exit code %d; want 0", k.setup.ExecSucceeds, resp.GetExitCode())
		}
	}
	if k.setup.ExecFails != nil {
		resp, err := exec(id, k.setup.ExecFails)
		if k.wantCode("ExecSync of ExecFails", err, codes.OK) && resp.GetExitCode() == 0 {
			k.Errorf("ExecSync of %q: exit code 0; want a failure, as a result and not an error", k.setup.ExecFails)
		}
	}
	_, err = exec("", cmd)
	k.wantCode("ExecSync without container_id", err, codes.InvalidArgument)
	_, err = exec(id, nil)
	k.wantCode("ExecSync without cmd", err, codes.InvalidArgument)
	_, err = exec(unknownID, cmd)
	k.wantCode("ExecSync in an unknown container", err, codes.NotFound)
	k.mustOK("StopContainer", k.stop(id)())
	_, err = exec(id, cmd)
	k.wantCode("ExecSync in an exited container", err, codes.FailedPrecondition)
}
