package runtimetest

import (
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// checkExitCodes: a killed container reports the kill, never exit 0, in
// ContainerStatus; a listing either gives the same exit code with
// finished_at, or no exit code (finished_at 0). The host decides restart
// policies and pod phases from exit codes, so an exit 0 without evidence
// could make a failed pod Succeeded.
func checkExitCodes(k *kit) {
	image := k.ensureImage()
	sb, sbCfg := k.runSandbox("exits", nil)
	killed, _ := k.createContainer(sb, sbCfg, "killed", image, map[string]string{"runtimetest.podhost.io/exit": "killed"})
	byStop, _ := k.createContainer(sb, sbCfg, "sandbox-stopped", image, map[string]string{"runtimetest.podhost.io/exit": "sandbox-stopped"})
	for _, id := range []string{killed, byStop} {
		k.mustOK("StartContainer", k.start(id)())
	}
	k.mustOK("StopContainer with timeout 0", k.stop(killed)())
	_, err := k.rt.StopSandbox(k.ctx(), &runtimev1.StopSandboxRequest{SandboxId: sb})
	k.mustOK("StopSandbox", err)

	resp, err := k.rt.ListContainers(k.ctx(), &runtimev1.ListContainersRequest{Filter: &runtimev1.ContainerFilter{LabelSelector: k.labels}})
	k.mustOK("ListContainers", err)
	listed := map[string]*runtimev1.Container{}
	for _, c := range resp.GetContainers() {
		listed[c.GetId()] = c
	}
	for _, tt := range []struct{ how, id string }{
		{"killed by StopContainer with timeout 0", killed},
		{"killed by StopSandbox", byStop},
	} {
		st, err := k.rt.ContainerStatus(k.ctx(), &runtimev1.ContainerStatusRequest{ContainerId: tt.id})
		k.mustOK("ContainerStatus", err)
		c := st.GetContainer()
		if c.GetState() != runtimev1.ContainerState_CONTAINER_STATE_EXITED || c.GetExitCode() == 0 || c.GetFinishedAt() <= 0 {
			k.Errorf("container %s: ContainerStatus gives state %v exit code %d finished %d; want EXITED with a non-zero exit code and a finish time",
				tt.how, c.GetState(), c.GetExitCode(), c.GetFinishedAt())
			continue
		}
		l, ok := listed[tt.id]
		switch {
		case !ok:
			k.Errorf("container %s: not listed", tt.how)
		case l.GetFinishedAt() == 0 && l.GetExitCode() != 0:
			k.Errorf("container %s: listed with exit code %d but no finish time; want both or neither", tt.how, l.GetExitCode())
		case l.GetFinishedAt() != 0 && l.GetExitCode() != c.GetExitCode():
			k.Errorf("container %s: listed with exit code %d and a finish time; ContainerStatus gives %d", tt.how, l.GetExitCode(), c.GetExitCode())
		}
	}
}
