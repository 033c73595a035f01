package runtimemanager

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// lastInitRun is the index of the last init container that has a
// container in the sandbox, -1 if none has.
func (p *planner) lastInitRun(sandboxID string) int {
	last := -1
	for i := range p.pod.Spec.InitContainers {
		if p.st.newest(p.pod.Spec.InitContainers[i].Name, sandboxID) != nil {
			last = i
		}
	}
	return last
}

// keepSidecar plans what keeps a sidecar running: as an app container's
// (keepRunning), but it restarts whatever its exit code and the pod's
// restart policy.
func (p *planner) keepSidecar(spec *v1.Container, c *containerInfo) {
	p.keepRunning(spec, c, containerTypeInit, "sidecar not running", func(int32) bool { return true })
}

// sidecarStarted reports whether the sidecar runs, is kept, and its
// startup probe (if any) succeeded: the next init container may start.
func (p *planner) sidecarStarted(spec *v1.Container, c *containerInfo) bool {
	switch {
	case c == nil || c.state != lifecycle.ContainerRunning:
		return false
	case c.hash != "" && !sameSpec(c.hash, spec):
		return false
	case spec.StartupProbe == nil || p.started == nil:
		return true
	}
	return p.started(spec.Name, c.id)
}

// stopSidecarsAfterApps stops the sidecars once every app container exited
// and none will be restarted: they must not keep a finished pod running.
// Nothing restarts them any more.
func (p *planner) stopSidecarsAfterApps(sandboxID string) {
	sidecars := map[string]bool{}
	var names []string
	for i := range p.pod.Spec.InitContainers {
		if c := &p.pod.Spec.InitContainers[i]; lifecycle.IsRestartableInitContainer(c) {
			sidecars[c.Name] = true
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	for i := range p.pod.Spec.Containers {
		spec := &p.pod.Spec.Containers[i]
		c := p.st.newest(spec.Name, sandboxID)
		if c == nil || c.state != lifecycle.ContainerExited || lifecycle.ContainerRestarts(p.pod, spec, c.exitCode) {
			return
		}
	}
	p.a.start = slices.DeleteFunc(p.a.start, func(s startAction) bool { return sidecars[s.spec.Name] })
	p.a.waiting = slices.DeleteFunc(p.a.waiting, func(w backOffWait) bool { return sidecars[w.name] })
	for _, name := range names {
		delete(p.a.records, name)
		c := p.st.newest(name, sandboxID)
		if c == nil || c.state == lifecycle.ContainerExited || slices.ContainsFunc(p.a.kill, func(k killAction) bool { return k.id == c.id }) {
			continue
		}
		p.a.kill = append(p.a.kill, killAction{id: c.id, name: c.name, reason: "every app container exited", preStop: true})
	}
}
