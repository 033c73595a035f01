package lifecycle

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ProbeView tells the status generation whether a running container has
// started and is ready. The status manager applies it to every status it
// caches.
type ProbeView interface {
	// ContainerProbes returns started and ready for the running instance
	// containerID of the named container of pod.
	ContainerProbes(pod *v1.Pod, container, containerID string) (started, ready bool)
}

type probeKey struct {
	uid       types.UID
	container string
	kind      ProbeKind
}

type probeEntry struct {
	containerID string
	result      ProbeResult
}

// ProbeResults is the results cache of the probe workers: the last result
// of each probe for one container instance. It is safe for concurrent use.
type ProbeResults struct {
	mu sync.Mutex
	m  map[probeKey]probeEntry
}

// NewProbeResults returns an empty cache.
func NewProbeResults() *ProbeResults { return &ProbeResults{m: map[probeKey]probeEntry{}} }

// Set stores the result of a probe for a container instance and reports
// whether it changed.
func (r *ProbeResults) Set(uid types.UID, container string, kind ProbeKind, containerID string, res ProbeResult) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := probeKey{uid, container, kind}
	e := probeEntry{containerID, res}
	if r.m[k] == e {
		return false
	}
	r.m[k] = e
	return true
}

// Get returns the stored result of a probe of the container instance.
func (r *ProbeResults) Get(uid types.UID, container string, kind ProbeKind, containerID string) (ProbeResult, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.m[probeKey{uid, container, kind}]
	if !ok || e.containerID != containerID {
		return ProbeUnknown, false
	}
	return e.result, true
}

// RemovePod forgets every result of the pod.
func (r *ProbeResults) RemovePod(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.m {
		if k.uid == uid {
			delete(r.m, k)
		}
	}
}

// ContainerProbes implements ProbeView for app containers and sidecars
// (the runtime manager also asks it whether a sidecar started before it
// starts the next init container): a container without a startup
// probe has started; one with it has started once the probe succeeded for
// this instance. A container is ready only once started, and then when it
// has no readiness probe or its readiness probe succeeded.
func (r *ProbeResults) ContainerProbes(pod *v1.Pod, container, containerID string) (started, ready bool) {
	spec := specContainer(pod, container)
	if spec == nil {
		return true, true
	}
	started = r.passed(pod.UID, spec, Startup, containerID)
	return started, started && r.passed(pod.UID, spec, Readiness, containerID)
}

// passed is true when the container has no probe of the kind or its
// result for the instance is success.
func (r *ProbeResults) passed(uid types.UID, c *v1.Container, k ProbeKind, containerID string) bool {
	if probeOf(c, k) == nil {
		return true
	}
	res, _ := r.Get(uid, c.Name, k, containerID)
	return res == ProbeSuccess
}

// specContainer returns the probed container named name, an app container
// or a sidecar, or nil.
func specContainer(pod *v1.Pod, name string) *v1.Container {
	for _, c := range probedContainers(pod) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// probedContainers are the containers whose probes run: the sidecars (init
// containers with restartPolicy Always) and the app containers. Ordinary
// init containers have none.
func probedContainers(pod *v1.Pod) []*v1.Container {
	var out []*v1.Container
	for i := range pod.Spec.InitContainers {
		if IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			out = append(out, &pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}

// hasProbes reports whether a probed container of the pod has a probe
// that decides its started or ready. Pods without one keep the status as
// generated.
func hasProbes(pod *v1.Pod) bool {
	for _, c := range probedContainers(pod) {
		if c.ReadinessProbe != nil || c.StartupProbe != nil {
			return true
		}
	}
	return false
}

// applyProbes sets started and ready of every running app container and
// sidecar from the view and derives the Initialized, ContainersReady and
// Ready conditions again.
func applyProbes(pod *v1.Pod, s *v1.PodStatus, view ProbeView) {
	apply := func(l []v1.ContainerStatus, sidecarsOnly bool) {
		for i := range l {
			c := &l[i]
			if c.State.Running == nil {
				continue
			}
			if spec := initSpec(pod, c.Name); sidecarsOnly && (spec == nil || !IsRestartableInitContainer(spec)) {
				continue
			}
			started, ready := view.ContainerProbes(pod, c.Name, c.ContainerID)
			c.Started, c.Ready = &started, ready
		}
	}
	apply(s.InitContainerStatuses, true)
	apply(s.ContainerStatuses, false)
	refreshReadinessConditions(pod, s)
}
