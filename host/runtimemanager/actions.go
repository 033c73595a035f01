package runtimemanager

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// startAction starts one container: a new one, or existingID when a
// container was created but never started (a sync interrupted between
// CreateContainer and StartContainer).
type startAction struct {
	spec       *v1.Container
	kind       string
	attempt    uint32
	existingID string
	reason     string
	// target and targetID: an ephemeral container's target container
	// (targetContainerName) and the id of its newest instance in the
	// sandbox, whose PID namespace it joins; targetID is empty when the
	// target has no container there.
	target, targetID string
	// run is the pod run the container belongs to (AnnotationPodRun).
	run uint32
}

// killAction stops one container; with preStop its preStop hook runs
// first.
type killAction struct {
	id, name, reason string
	preStop          bool
	// restartAll: stopped because its run ended (restartall.go), with
	// restartAllGrace and without preStop.
	restartAll bool
}

// backOffWait is a container that should restart but waits out its
// back-off until until.
type backOffWait struct {
	name  string
	delay time.Duration
	until time.Time
}

// actions is what one SyncPod does, in this order: kill the whole pod,
// kill and remove single containers, create the sandbox, start
// containers. waiting lists the containers in back-off; records are the
// back-off entries to store.
type actions struct {
	killPod        bool
	createSandbox  bool
	sandboxID      string
	sandboxAttempt uint32
	kill           []killAction
	remove         []string
	start          []startAction
	waiting        []backOffWait
	records        map[string]backOffEntry
	// initFailed: an init container failed under restartPolicy Never, so
	// the pod has failed and nothing is started.
	initFailed bool
	// resize are the running containers to update in place, podResize the
	// pod cgroup's update (resize.go); both after the kills, before the
	// starts.
	resize    []resizeAction
	podResize *podResize
}

// restartPolicy returns the pod's policy, Always when unset.
func restartPolicy(pod *v1.Pod) v1.RestartPolicy {
	if pod.Spec.RestartPolicy == "" {
		return v1.RestartPolicyAlways
	}
	return pod.Spec.RestartPolicy
}

// planner carries the inputs of computeActions.
type planner struct {
	pod *v1.Pod
	// st is the runtime's view of the pod without the containers of ended
	// runs in the sandbox (inRun); all is the whole view.
	st, all *podState
	// run is the pod run the containers started now belong to.
	run    uint32
	now    time.Time
	prev   map[string]backOffEntry
	policy v1.RestartPolicy
	// started reports whether the startup probe of the named container
	// succeeded for the instance id; nil means every one did.
	started func(name, id string) bool
	a       actions
}

// computeActions decides what SyncPod does for pod given the runtime's
// view st, the time now and the stored back-off entries of the pod's
// containers (by name). It is pure.
//
// Rules, in order:
//   - No ready sandbox: kill whatever still runs, then create a sandbox
//     (attempt one above the newest) and start the first init container,
//     or every app container when there is none. A pod whose containers
//     already ran is not given a new sandbox when its policy would not
//     restart them (Never; OnFailure after every app container succeeded).
//   - Containers outside the ready sandbox, or whose name is not in the
//     spec, are killed.
//   - Init containers run one at a time, in order: the next starts only
//     after the previous exited 0. A failed init container restarts (with
//     back-off) unless the policy is Never, which fails the pod. Once an
//     app container exists in the sandbox the init phase is over.
//   - A sidecar (an init container with restartPolicy Always) starts in
//     its place among the init containers; the next one starts once it
//     runs and its startup probe succeeded (started). It is restarted
//     whatever the pod's policy, with back-off, during the init phase and
//     after it, and stopped once every app container exited for good
//     (sidecars.go).
//   - App containers start when all init containers succeeded. A running
//     container whose spec hash changed is killed and started again. An
//     exited one restarts per the policy, after its crash back-off.
//   - A created but never started container with the current hash is
//     started rather than created again; with another hash it is removed.
//   - A running container whose cpu or memory changed in the spec is
//     updated in place, or restarted when a changed resource's
//     resizePolicy says RestartContainer; the pod cgroup follows the
//     pod-level resources (resize.go). A created one is created again.
//   - A container whose start was cut short (startCut) is removed and
//     created again at the same attempt: no restart, no back-off.
//   - An ephemeral container starts in the ready sandbox once, whatever
//     the init phase, and is never restarted nor started again in a new
//     sandbox: only while no container of its name exists.
func computeActions(pod *v1.Pod, st *podState, now time.Time, prev map[string]backOffEntry, started func(name, id string) bool) actions {
	p := &planner{pod: pod, st: st, all: st, now: now, prev: prev, policy: restartPolicy(pod), started: started, a: actions{records: map[string]backOffEntry{}}}
	p.plan()
	for i := range p.a.start {
		p.a.start[i].run = p.run
	}
	return p.a
}

func (p *planner) plan() {
	sb := p.st.newestSandbox()
	if sb == nil || !sb.ready {
		p.newSandbox(sb)
		return
	}
	p.a.sandboxID, p.a.sandboxAttempt = sb.id, sb.attempt
	p.startRun(sb.id)
	p.planPodResize(sb)
	p.killStrays(sb.id)
	p.ephemeralContainers(sb.id)
	if !p.initContainers(sb.id) {
		return
	}
	p.appContainers(sb.id)
	p.stopSidecarsAfterApps(sb.id)
}

// nextAttempt is the attempt of the next container of the name: one above
// the newest (of any run), 0 for the first.
func (p *planner) nextAttempt(name string) uint32 {
	if c := p.all.newest(name, ""); c != nil {
		return c.restartCount + 1
	}
	return 0
}

func (p *planner) startNew(spec *v1.Container, kind, reason string) {
	p.a.start = append(p.a.start, startAction{spec: spec, kind: kind, attempt: p.nextAttempt(spec.Name), reason: reason})
}

func (p *planner) newSandbox(old *sandboxInfo) {
	p.a.killPod = p.st.hasRunning()
	if old != nil && len(p.st.containers) > 0 && !p.restartsAfterSandboxDeath() {
		return
	}
	p.a.createSandbox = true
	if old != nil {
		p.a.sandboxAttempt = old.attempt + 1
	}
	if len(p.pod.Spec.InitContainers) > 0 {
		p.startNew(&p.pod.Spec.InitContainers[0], containerTypeInit, "new sandbox")
		return
	}
	for i := range p.pod.Spec.Containers {
		p.startNew(&p.pod.Spec.Containers[i], containerTypeApp, "new sandbox")
	}
}

// restartsAfterSandboxDeath reports whether a pod whose containers already
// ran gets a new sandbox: not under Never, and under OnFailure only while
// some app container has not succeeded.
func (p *planner) restartsAfterSandboxDeath() bool {
	for i := range p.pod.Spec.Containers {
		spec := &p.pod.Spec.Containers[i]
		c := p.st.newest(spec.Name, "")
		switch {
		case c == nil || c.state != lifecycle.ContainerExited:
			if !lifecycle.NeverRestarts(p.pod, spec) {
				return true
			}
		case lifecycle.ContainerRestarts(p.pod, spec, c.exitCode):
			return true
		}
	}
	return false
}

// killStrays kills live containers outside the sandbox or not in the spec.
func (p *planner) killStrays(sandboxID string) {
	inSpec := map[string]bool{}
	for _, c := range p.pod.Spec.InitContainers {
		inSpec[c.Name] = true
	}
	for _, c := range p.pod.Spec.Containers {
		inSpec[c.Name] = true
	}
	for _, c := range p.pod.Spec.EphemeralContainers {
		inSpec[c.Name] = true
	}
	for _, c := range p.st.containers {
		if c.state == lifecycle.ContainerExited {
			continue
		}
		switch {
		case c.sandboxID != sandboxID:
			p.a.kill = append(p.a.kill, killAction{id: c.id, name: c.name, reason: "sandbox is not current"})
		case !inSpec[c.name]:
			p.a.kill = append(p.a.kill, killAction{id: c.id, name: c.name, reason: "not in the pod spec"})
		}
	}
}

// initContainers plans the init phase and reports whether it is over.
// Sidecars are kept running also once it is.
func (p *planner) initContainers(sandboxID string) bool {
	initialized := false
	for i := range p.pod.Spec.Containers {
		if p.st.newest(p.pod.Spec.Containers[i].Name, sandboxID) != nil {
			initialized = true
		}
	}
	last := p.lastInitRun(sandboxID)
	for i := range p.pod.Spec.InitContainers {
		spec := &p.pod.Spec.InitContainers[i]
		c := p.st.newest(spec.Name, sandboxID)
		// An init container before one that ran already did its part.
		done := initialized || i < last
		if lifecycle.IsRestartableInitContainer(spec) {
			p.keepSidecar(spec, c)
			if done || p.sidecarStarted(spec, c) {
				continue
			}
			return false
		}
		if done {
			continue
		}
		switch {
		case c == nil:
			p.startNew(spec, containerTypeInit, "next init container")
		case c.startCut:
			p.startAgain(spec, c, containerTypeInit)
		case c.state == lifecycle.ContainerCreated:
			p.startCreated(spec, c, containerTypeInit)
		case c.state == lifecycle.ContainerRunning:
			// Wait for it to finish; its resources may change meanwhile.
			p.planResize(spec, c, containerTypeInit)
		case c.state == lifecycle.ContainerUnknown:
			p.a.kill = append(p.a.kill, killAction{id: c.id, name: c.name, reason: "state unknown"})
			p.startNew(spec, containerTypeInit, "state unknown")
		case c.exitCode == 0:
			continue
		case !lifecycle.InitContainerRestarts(p.pod, spec, c.exitCode):
			p.a.initFailed = true
		default:
			p.restartAfterBackOff(spec, c, containerTypeInit)
		}
		return false
	}
	return true
}

// ephemeralContainers plans the ephemeral containers that have no
// container yet, as the kubelet: once, in the ready sandbox, before and
// whatever the init phase.
func (p *planner) ephemeralContainers(sandboxID string) {
	for i := range p.pod.Spec.EphemeralContainers {
		ec := &p.pod.Spec.EphemeralContainers[i]
		spec := (*v1.Container)(&ec.EphemeralContainerCommon)
		if p.st.newest(spec.Name, "") != nil {
			continue
		}
		s := startAction{spec: spec, kind: containerTypeEphemeral, attempt: 0, reason: "ephemeral container", target: ec.TargetContainerName}
		if s.target != "" {
			if t := p.st.newest(s.target, sandboxID); t != nil {
				s.targetID = t.id
			}
		}
		p.a.start = append(p.a.start, s)
	}
}

// appContainers plans the app containers once the init phase is over.
func (p *planner) appContainers(sandboxID string) {
	for i := range p.pod.Spec.Containers {
		spec := &p.pod.Spec.Containers[i]
		p.keepRunning(spec, p.st.newest(spec.Name, sandboxID), containerTypeApp, "not created yet",
			func(exitCode int32) bool { return lifecycle.ContainerRestarts(p.pod, spec, exitCode) })
	}
}

// keepRunning plans what keeps the container c of spec running: start one
// when there is none (for reason none), start it when it was created but
// not started (or its start was cut short), replace it when its spec
// changed, kill it when its state is unknown and then start a new one if
// restart allows a failed one, and restart it after its back-off when it
// exited and restart allows its exit code.
func (p *planner) keepRunning(spec *v1.Container, c *containerInfo, kind, none string, restart func(exitCode int32) bool) {
	switch {
	case c == nil:
		p.startNew(spec, kind, none)
	case c.startCut:
		p.startAgain(spec, c, kind)
	case c.state == lifecycle.ContainerCreated:
		p.startCreated(spec, c, kind)
	case c.state == lifecycle.ContainerRunning:
		if c.hash != "" && !sameSpec(c.hash, spec) {
			p.a.kill = append(p.a.kill, killAction{id: c.id, name: c.name, reason: "spec changed"})
			p.startNew(spec, kind, "spec changed")
			return
		}
		p.planResize(spec, c, kind)
	case c.state == lifecycle.ContainerUnknown:
		p.a.kill = append(p.a.kill, killAction{id: c.id, name: c.name, reason: "state unknown"})
		if restart(1) {
			p.startNew(spec, kind, "state unknown")
		}
	case restart(c.exitCode):
		p.restartAfterBackOff(spec, c, kind)
	}
}

// startCreated starts a created container, or replaces it when its spec
// changed.
func (p *planner) startCreated(spec *v1.Container, c *containerInfo, kind string) {
	if c.hash == "" || sameSpec(c.hash, spec) && !c.resourcesChanged(p.pod, spec) {
		p.a.start = append(p.a.start, startAction{spec: spec, kind: kind, attempt: c.restartCount, existingID: c.id, reason: "created, not started"})
		return
	}
	p.a.remove = append(p.a.remove, c.id)
	p.startNew(spec, kind, "spec changed")
}

// startAgain replaces a container whose start was cut short and that
// never started: removed, and created again at the same attempt, without
// back-off.
func (p *planner) startAgain(spec *v1.Container, c *containerInfo, kind string) {
	p.a.remove = append(p.a.remove, c.id)
	p.a.start = append(p.a.start, startAction{spec: spec, kind: kind, attempt: c.restartCount, reason: "start cut short"})
}

// restartAfterBackOff restarts an exited container unless it is in its
// crash back-off.
func (p *planner) restartAfterBackOff(spec *v1.Container, c *containerInfo, kind string) {
	prev, ok := p.prev[spec.Name]
	next := nextBackOff(prev, ok, c.startedAt, c.finishedAt)
	p.a.records[spec.Name] = next
	finished := c.finishedAt
	if finished.IsZero() {
		finished = c.createdAt
	}
	if until := finished.Add(next.delay); p.now.Before(until) {
		p.a.waiting = append(p.a.waiting, backOffWait{name: spec.Name, delay: next.delay, until: until})
		return
	}
	p.startNew(spec, kind, "restart")
}
