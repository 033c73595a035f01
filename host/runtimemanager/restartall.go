package runtimemanager

import (
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// AnnotationPodRun is the run of the pod in its sandbox that a container
// belongs to; missing means 0. A container exiting with a
// RestartAllContainers rule (lifecycle.RestartsAll) ends the run: every
// container of it still running is stopped, and the pod starts again from
// its first init container in the same sandbox, its new containers in the
// next run. The containers of ended runs stay in the runtime, so that
// restart counts (one above the newest instance) and last terminations
// come from the runtime as for any restart.
const AnnotationPodRun = "podhost.dev/pod-run"

// restartAllGrace is the grace period, in seconds, of the containers
// stopped when a run ends: the kubelet's minimum, without preStop hooks.
const restartAllGrace = 2

// run is the pod run the container belongs to (AnnotationPodRun).
func runOf(annotations map[string]string) uint32 {
	r, _ := parseUint32(annotations[AnnotationPodRun])
	return r
}

// runAnnotation sets the run on a new container's annotations; run 0 is
// left unset, as containers made before runs existed.
func runAnnotation(a map[string]string, run uint32) {
	if run > 0 {
		a[AnnotationPodRun] = strconv.FormatUint(uint64(run), 10)
	}
}

// endedBefore reports whether c is an init or app container of sandboxID
// whose run is older than run. Ephemeral containers belong to no run:
// RestartAllContainers leaves them alone, as the kubelet does.
func (c *containerInfo) endedBefore(sandboxID string, run uint32) bool {
	return c.sandboxID == sandboxID && c.run < run && c.kind != containerTypeEphemeral
}

// currentRun is the newest run among the containers of sandboxID.
func (s *podState) currentRun(sandboxID string) uint32 {
	var run uint32
	for _, c := range s.containers {
		if c.sandboxID == sandboxID {
			run = max(run, c.run)
		}
	}
	return run
}

// inRun is s without the containers of sandboxID that ended before run.
func (s *podState) inRun(sandboxID string, run uint32) *podState {
	v := *s
	v.containers = slices.DeleteFunc(slices.Clone(s.containers), func(c containerInfo) bool { return c.endedBefore(sandboxID, run) })
	return &v
}

// markEnded marks the containers of the newest sandbox that an ended run
// left (endedBefore the current run) for the lifecycle's status: they wait
// RestartingAllContainers until their next instance exists.
func (s *podState) markEnded() {
	sb := s.newestSandbox()
	if sb == nil {
		return
	}
	run := s.currentRun(sb.id)
	for i := range s.containers {
		s.containers[i].ended = s.containers[i].endedBefore(sb.id, run)
	}
}

// restartAllDue reports whether an init or app container of the current
// run (p.st) in sandboxID exited with a RestartAllContainers rule.
func (p *planner) restartAllDue(sandboxID string) bool {
	for _, list := range [][]v1.Container{p.pod.Spec.InitContainers, p.pod.Spec.Containers} {
		for i := range list {
			c := p.st.newest(list[i].Name, sandboxID)
			if c != nil && c.state == lifecycle.ContainerExited && lifecycle.RestartsAll(&list[i], c.exitCode) {
				return true
			}
		}
	}
	return false
}

// startRun plans the run of the pod in the ready sandbox sandboxID: the
// current one, or, when a container of it exited with a
// RestartAllContainers rule, the next one, after stopping (without
// preStop, with restartAllGrace) what of the current run still runs and
// removing what was created but not started. p.st becomes the run's view
// (inRun); p.all keeps every container, for the attempts.
func (p *planner) startRun(sandboxID string) {
	p.run = p.all.currentRun(sandboxID)
	p.st = p.all.inRun(sandboxID, p.run)
	if !p.restartAllDue(sandboxID) {
		return
	}
	for _, c := range p.st.containers {
		if c.sandboxID != sandboxID || c.kind == containerTypeEphemeral {
			continue
		}
		switch c.state {
		case lifecycle.ContainerExited:
		case lifecycle.ContainerCreated:
			p.a.remove = append(p.a.remove, c.id)
		default:
			p.a.kill = append(p.a.kill, killAction{id: c.id, name: c.name, reason: reasonRestartAll, restartAll: true})
		}
	}
	p.run++
	p.st = p.all.inRun(sandboxID, p.run)
}

// reasonRestartAll is why the containers of an ended run are stopped.
const reasonRestartAll = "RestartAllContainers"
