package lifecycle

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
)

// ProbeKind is the kind of a container probe.
type ProbeKind int

// The three probe kinds of a container.
const (
	Liveness ProbeKind = iota
	Readiness
	Startup
)

// String returns the kubelet's probe_type label: Liveness, Readiness or
// Startup.
func (k ProbeKind) String() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	}
	return "Unknown"
}

// ProbeResult is what one probe, or a run of probes past its threshold,
// says about a container.
type ProbeResult int

// Probe results. Unknown is the initial result of a startup probe.
const (
	ProbeUnknown ProbeResult = iota
	ProbeSuccess
	ProbeFailure
	// ProbeWarning is a success the runner warns about (an httpGet probe
	// that stopped at a redirect to another host): it counts as a success
	// and its output goes into a ProbeWarning event, as the kubelet's.
	ProbeWarning
)

// String returns the kubelet's result label of prober_probe_total.
func (r ProbeResult) String() string {
	switch r {
	case ProbeSuccess:
		return "successful"
	case ProbeFailure:
		return "failed"
	}
	return "unknown"
}

// The kubelet's defaults of the probe fields, applied where a field is
// zero (a manifest read without an API server is not defaulted).
const (
	defaultProbeTimeout          = 1
	defaultProbePeriod           = 10
	defaultProbeSuccessThreshold = 1
	defaultProbeFailureThreshold = 3
)

// ProbeWithDefaults returns a copy of p with the kubelet's defaults in
// the zero fields: timeoutSeconds 1, periodSeconds 10, successThreshold 1,
// failureThreshold 3.
func ProbeWithDefaults(p *v1.Probe) v1.Probe {
	out := *p.DeepCopy()
	if out.TimeoutSeconds == 0 {
		out.TimeoutSeconds = defaultProbeTimeout
	}
	if out.PeriodSeconds == 0 {
		out.PeriodSeconds = defaultProbePeriod
	}
	if out.SuccessThreshold == 0 {
		out.SuccessThreshold = defaultProbeSuccessThreshold
	}
	if out.FailureThreshold == 0 {
		out.FailureThreshold = defaultProbeFailureThreshold
	}
	return out
}

// ProbeTarget is everything an executor needs to run one probe.
type ProbeTarget struct {
	Pod         *v1.Pod
	Container   *v1.Container
	ContainerID string
	// PodIP is the pod's first IP; empty for a host-network pod whose
	// runtime reports none.
	PodIP string
	Kind  ProbeKind
	// Probe has the defaults applied.
	Probe v1.Probe
}

// ProbeRunner executes one probe (exec through the runtime, httpGet,
// tcpSocket, grpc). ctx carries the probe's timeout; for an exec probe,
// whose timeout the runtime enforces, the timeout and the runtime's time
// to answer (probeCallLimit). A nil error with
// ProbeFailure is a probe that ran and failed; output is then shown in the
// Unhealthy event. An error means the probe could not be judged; its
// result is thrown away.
type ProbeRunner interface {
	RunProbe(ctx context.Context, t ProbeTarget) (result ProbeResult, output string, err error)
}

// ContainerKiller stops one container so that the restart policy decides
// what follows. The host implements it with the runtime manager.
type ContainerKiller interface {
	// KillContainer stops the container with the given ID within grace
	// seconds. message says why (it is the container's termination
	// message when the runtime keeps one).
	KillContainer(ctx context.Context, pod *v1.Pod, containerName, containerID string, grace int64, message string) error
}

// execProbeSlack is how long past its timeoutSeconds an exec probe waits
// for the runtime's answer: the kubelet's default runtime request timeout.
const execProbeSlack = 2 * time.Minute

// probeCallLimit bounds one probe call: its timeoutSeconds, and for an
// exec probe the runtime's time on top. The runtime kills the command at
// the timeout (the runner passes timeoutSeconds on) and answers; a call
// cut off sooner would leave the command running while the next period
// starts another, piling execs up on a loaded runtime. The kubelet waits
// as long.
func probeCallLimit(p *v1.Probe) time.Duration {
	limit := seconds(p.TimeoutSeconds)
	if p.Exec != nil {
		limit += execProbeSlack
	}
	return limit
}

// probeGrace is the grace period of a kill after a failed liveness or
// startup probe: the probe's terminationGracePeriodSeconds, else the
// pod's, else the default.
func probeGrace(pod *v1.Pod, p *v1.Probe) int64 {
	return GracePeriod(pod, p.TerminationGracePeriodSeconds)
}

// probeOf returns the container's probe of the given kind, or nil.
func probeOf(c *v1.Container, k ProbeKind) *v1.Probe {
	switch k {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	case Startup:
		return c.StartupProbe
	}
	return nil
}

// seconds converts a probe field to a duration.
func seconds(n int32) time.Duration { return time.Duration(n) * time.Second }
