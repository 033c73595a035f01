package lifecycle

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// probeState is the state machine of one probe of one container, the
// kubelet's probe worker without its goroutine. At each period next says
// whether to probe; observe turns the outcome of a probe into the result
// the status and the restart decision read, once a run of equal outcomes
// reaches its threshold. It does no I/O and reads no clock.
type probeState struct {
	kind ProbeKind
	// probe has the defaults applied.
	probe v1.Probe
	// containerID is the container instance probed; a new one resets the
	// state.
	containerID string
	last        ProbeResult
	run         int32
	// onHold is set once a liveness or startup failure asked for a kill:
	// the container is not probed again until it is replaced.
	onHold bool
}

// probeInput is what a probe worker sees at one period.
type probeInput struct {
	now time.Time
	// terminating is true once termination of the pod was requested.
	terminating bool
	// restartNever is the pod's restart policy Never: an exited container
	// will not come back.
	restartNever bool
	// container is the newest runtime status of the container (nil if the
	// runtime has none yet).
	container *ContainerStatus
	// started is true once the container's startup probe succeeded, or
	// when it has none.
	started bool
}

// probeStep is what next decides.
type probeStep struct {
	// run asks for the probe to be executed now.
	run bool
	// stop ends the worker: it never probes again.
	stop bool
	// set, when true, stores result for the current container instance.
	set    bool
	result ProbeResult
}

// initialResult is the result a new container instance starts with:
// not ready, alive, not yet started.
func initialResult(k ProbeKind) ProbeResult {
	switch k {
	case Readiness:
		return ProbeFailure
	case Liveness:
		return ProbeSuccess
	}
	return ProbeUnknown
}

// next decides what the worker does at one period. No probe runs for a
// terminating pod, a container that is not running, a container still
// within its initial delay, a container on hold after a kill, a liveness
// or readiness probe before startup succeeded, nor a startup probe after.
func (w *probeState) next(in probeInput) probeStep {
	if in.terminating {
		return probeStep{stop: true}
	}
	c := in.container
	if c == nil || c.ID == "" {
		return probeStep{}
	}
	var step probeStep
	if c.ID != w.containerID {
		w.containerID, w.last, w.run, w.onHold = c.ID, ProbeUnknown, 0, false
		step = probeStep{set: true, result: initialResult(w.kind)}
	}
	if w.onHold {
		return step
	}
	if c.State != ContainerRunning {
		if w.kind == Readiness {
			step.set, step.result = true, ProbeFailure
		}
		step.stop = c.State == ContainerExited && in.restartNever
		return step
	}
	switch {
	case w.kind == Startup && in.started:
		return step
	case w.kind != Startup && !in.started:
		return step
	case in.now.Sub(c.StartedAt) < seconds(w.probe.InitialDelaySeconds):
		return step
	}
	step.run = true
	return step
}

// observe records the outcome of one probe. It returns the result to
// store once the run of equal outcomes reaches the threshold, and kill
// when a liveness or startup probe failed failureThreshold times in a row.
func (w *probeState) observe(r ProbeResult) (result ProbeResult, set, kill bool) {
	if r == w.last {
		w.run++
	} else {
		w.last, w.run = r, 1
	}
	if (r == ProbeFailure && w.run < w.probe.FailureThreshold) || (r == ProbeSuccess && w.run < w.probe.SuccessThreshold) {
		return r, false, false
	}
	if r == ProbeFailure && w.kind != Readiness {
		w.onHold, w.run = true, 0
		return r, true, true
	}
	return r, true, false
}
