package lifecycle

import (
	"container/list"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// GeneratePodStatus builds the API status of a pod from the runtime's view.
// cached is the status manager's last status (zero if none); its
// DisruptionTarget condition is carried over. podIsTerminal
// is true once no container can run. A terminal phase never regresses: the
// cached or API terminal phase wins over a generated one, and Failed never
// becomes Succeeded. reasons may be nil.
func GeneratePodStatus(pod *v1.Pod, rs *PodStatus, cached v1.PodStatus, podIsTerminal bool, reasons *ReasonCache) v1.PodStatus {
	old := cached
	if old.Phase == "" {
		old = pod.Status
	}
	conv := containerConversion{pod: pod, rs: rs, reasons: reasons,
		deleting: pod.DeletionTimestamp != nil, podIsTerminal: podIsTerminal}
	s := v1.PodStatus{
		InitContainerStatuses:      conv.convert(pod.Spec.InitContainers, old.InitContainerStatuses, true),
		ContainerStatuses:          conv.convert(pod.Spec.Containers, old.ContainerStatuses, false),
		EphemeralContainerStatuses: conv.convert(ephemeralSpecs(pod), old.EphemeralContainerStatuses, false),
		StartTime:                  old.StartTime,
		QOSClass:                   PodQOS(pod),
		ObservedGeneration:         pod.Generation,
	}
	if rs != nil {
		for i, ip := range rs.IPs {
			if i == 0 {
				s.PodIP = ip
			}
			s.PodIPs = append(s.PodIPs, v1.PodIP{IP: ip})
		}
	}
	s.Phase = podPhase(pod, s.InitContainerStatuses, s.ContainerStatuses, podIsTerminal)
	switch {
	case !isTerminalPhase(s.Phase) && isTerminalPhase(cached.Phase):
		s.Phase = cached.Phase
	case isTerminalPhase(pod.Status.Phase) && s.Phase != pod.Status.Phase:
		s.Phase = pod.Status.Phase
	}
	if s.Phase == old.Phase {
		s.Reason, s.Message = old.Reason, old.Message
	}
	s.Conditions = podConditions(pod, &s, rs != nil && rs.SandboxReady)
	// DisruptionTarget is set once, by an eviction's status function (node
	// pressure, shutdown), not derived from the containers: it is carried
	// from the previous status, as the kubelet's generateAPIPodStatus does.
	if dt := findCondition(old.Conditions, v1.DisruptionTarget); dt != nil {
		s.Conditions = append(s.Conditions, *dt.DeepCopy())
	}
	if CouldRestartAll(pod) {
		keepInitialized(&old, &s)
		s.Conditions = append(s.Conditions, allContainersRestartingCondition(s.Phase, restartAllPending(pod, rs)))
	}
	setResizeStatus(pod, rs, &s)
	return s
}

// ephemeralSpecs are the pod's ephemeral containers as containers (the
// fields they share), or nil.
func ephemeralSpecs(pod *v1.Pod) []v1.Container {
	if len(pod.Spec.EphemeralContainers) == 0 {
		return nil
	}
	out := make([]v1.Container, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		out[i] = v1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
	}
	return out
}

// SetHostIPs sets the status's hostIP and hostIPs to the node's addresses
// (primary first), and gives a host-network pod that the runtime reported
// no IP the node's addresses as its pod IPs, as the kubelet does. No
// addresses leave the status as it is. The addresses are data the host
// gives (configured or detected there), never looked up here.
func SetHostIPs(pod *v1.Pod, s *v1.PodStatus, nodeIPs []string) {
	if len(nodeIPs) == 0 {
		return
	}
	s.HostIP = nodeIPs[0]
	s.HostIPs = make([]v1.HostIP, 0, len(nodeIPs))
	for _, ip := range nodeIPs {
		s.HostIPs = append(s.HostIPs, v1.HostIP{IP: ip})
	}
	if pod.Spec.HostNetwork && s.PodIP == "" {
		s.PodIP = nodeIPs[0]
		s.PodIPs = make([]v1.PodIP, 0, len(nodeIPs))
		for _, ip := range nodeIPs {
			s.PodIPs = append(s.PodIPs, v1.PodIP{IP: ip})
		}
	}
}

// containerConversion holds what every container's status is derived from.
type containerConversion struct {
	pod     *v1.Pod
	rs      *PodStatus
	reasons *ReasonCache
	// deleting and podIsTerminal mean that no container is to be
	// restarted: an exited one keeps its exit code.
	deleting, podIsTerminal bool
}

// convert derives the statuses of the init containers (init) or of the
// app containers from the runtime's and the previous ones.
func (cc containerConversion) convert(specs []v1.Container, old []v1.ContainerStatus, init bool) []v1.ContainerStatus {
	pod, rs, deleting, reasons := cc.pod, cc.rs, cc.deleting, cc.reasons
	if len(specs) == 0 {
		return nil
	}
	// The kubelet's default waiting reason: PodInitializing for every
	// container, init ones included, of a pod with init containers.
	hasInits := len(pod.Spec.InitContainers) > 0
	out := make([]v1.ContainerStatus, 0, len(specs))
	for i := range specs {
		spec := &specs[i]
		var prev *v1.ContainerStatus
		for i := range old {
			if old[i].Name == spec.Name {
				prev = &old[i]
			}
		}
		prevRunning := prev != nil && prev.State.Running != nil
		c := v1.ContainerStatus{Name: spec.Name, Image: spec.Image}
		if prev != nil {
			c.RestartCount = prev.RestartCount
			c.LastTerminationState = *prev.LastTerminationState.DeepCopy()
		}
		cs := rs.Container(spec.Name)
		switch {
		case cs == nil && prev != nil && prev.State.Terminated != nil:
			// Gone from the runtime after it exited (container GC,
			// crictl rm): its exit was observed, so it keeps it, as the
			// kubelet keeps a container's last terminated state.
			c = *prev.DeepCopy()
		case cs == nil:
			reason := "ContainerCreating"
			if hasInits {
				reason = "PodInitializing"
			}
			c.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}
			if prevRunning {
				c.LastTerminationState = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					ExitCode: lostExitCode, Reason: ReasonContainerStatusUnknown, Message: msgLostWhileRunning}}
				if !deleting {
					c.RestartCount++
				}
			}
		case cs.ResetByRestartAll && cs.State == ContainerExited && !deleting && !cc.podIsTerminal:
			resetContainerStatus(&c, cs)
		case cs.State == ContainerUnknown && prevRunning:
			c.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ExitCode: lostExitCode, Reason: ReasonContainerStatusUnknown, Message: msgLostAtTermination}}
			c.RestartCount++
		default:
			c.ContainerID, c.RestartCount = cs.ID, max(c.RestartCount, cs.RestartCount)
			c.ImageID = cs.ImageID
			c.State = runtimeState(cs)
			if last := rs.previous(cs); last != nil {
				c.LastTerminationState = runtimeState(last)
			}
		}
		if reasons != nil && cc.showsStartFailure(&c) {
			if r, ok := reasons.Get(pod.UID, spec.Name); ok {
				if c.State.Terminated != nil {
					c.LastTerminationState = c.State
				}
				c.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: r.Reason, Message: r.Message}}
			}
		}
		setStartedReady(&c, init && !IsRestartableInitContainer(spec))
		out = append(out, c)
	}
	return out
}

// setStartedReady sets started and ready as they are without probes: a
// running container has started, and is ready unless it is an ordinary
// init container, which is ready once it exited 0. The status manager
// applies the probes' results over them (applyProbes).
func setStartedReady(c *v1.ContainerStatus, ordinaryInit bool) {
	started := c.State.Running != nil
	c.Started = &started
	switch {
	case ordinaryInit:
		c.Ready = c.State.Terminated != nil && c.State.Terminated.ExitCode == 0
	default:
		c.Ready = started
	}
}

func runtimeState(cs *ContainerStatus) v1.ContainerState {
	switch cs.State {
	case ContainerRunning:
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cs.StartedAt)}}
	case ContainerExited:
		reason := cs.Reason
		if reason == "" {
			reason = "Completed"
			if cs.ExitCode != 0 {
				reason = "Error"
			}
		}
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: cs.ExitCode, Reason: reason, Message: cs.Message, ContainerID: cs.ID,
			StartedAt: metav1.NewTime(cs.StartedAt), FinishedAt: metav1.NewTime(cs.FinishedAt)}}
	case ContainerUnknown:
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: ReasonContainerStatusUnknown}}
	}
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}
}

// showsStartFailure reports whether the container's last start failure
// (image missing, back-off, …) replaces the state derived from the
// runtime. A container that has not run yet is waiting for its first
// start whatever the restart policy, so it shows why it cannot start. An
// exited container shows it only while it is to be restarted: never once
// the pod is deleted or terminal, so that its exit code is reported.
func (cc containerConversion) showsStartFailure(c *v1.ContainerStatus) bool {
	switch {
	case c.State.Running != nil:
		return false
	case c.State.Terminated == nil:
		return true
	case cc.deleting || cc.podIsTerminal:
		return false
	}
	if spec := initSpec(cc.pod, c.Name); spec != nil {
		return initRestarts(cc.pod, spec, c.State.Terminated.ExitCode)
	}
	return ContainerRestarts(cc.pod, appSpec(cc.pod, c.Name), c.State.Terminated.ExitCode)
}

// initRestarts reports whether the init container spec that exited with
// exitCode runs again: a sidecar always; an ordinary one that succeeded
// per the pod's policy, one that failed per InitContainerRestarts.
func initRestarts(pod *v1.Pod, spec *v1.Container, exitCode int32) bool {
	if exitCode == 0 {
		return IsRestartableInitContainer(spec) || podRestarts(pod.Spec.RestartPolicy, 0)
	}
	return InitContainerRestarts(pod, spec, exitCode)
}

// podPhase computes the phase from container statuses. A sidecar counts
// like an app container while it runs or waits for its first start; an
// exited one does not count, and one not started keeps the pod Pending
// until an app container ran.
func podPhase(pod *v1.Pod, init, regular []v1.ContainerStatus, podIsTerminal bool) v1.PodPhase {
	pendingInit := false
	var running, waiting, stopped, succeeded, unknown, pendingSidecars int
	for _, c := range init {
		if spec := initSpec(pod, c.Name); spec != nil && IsRestartableInitContainer(spec) {
			switch {
			case c.State.Running != nil:
				running++
				if c.Started == nil || !*c.Started {
					pendingSidecars++
				}
			case c.State.Terminated != nil || c.LastTerminationState.Terminated != nil:
			case c.State.Waiting != nil:
				waiting++
				pendingSidecars++
			default:
				unknown++
				pendingSidecars++
			}
			continue
		}
		if t := c.State.Terminated; t != nil {
			if t.ExitCode != 0 && !InitContainerRestarts(pod, initSpec(pod, c.Name), t.ExitCode) {
				return v1.PodFailed
			}
			if t.ExitCode == 0 {
				continue
			}
		}
		pendingInit = true
	}
	if pendingSidecars > 0 && !anyAppContainerRan(&v1.PodStatus{ContainerStatuses: regular}) {
		return v1.PodPending
	}
	// restarting: a stopped container that its restart policy (or
	// rules) restarts, or one waiting out its back-off.
	restarting := false
	for _, c := range regular {
		switch {
		case c.State.Running != nil:
			running++
		case c.State.Terminated != nil:
			stopped++
			if c.State.Terminated.ExitCode == 0 {
				succeeded++
			}
			restarting = restarting || ContainerRestarts(pod, appSpec(pod, c.Name), c.State.Terminated.ExitCode)
		case c.State.Waiting != nil:
			if c.LastTerminationState.Terminated != nil {
				stopped++
				restarting = true
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}
	switch {
	case pendingInit && running == 0 && stopped == 0:
		return v1.PodPending
	case waiting > 0:
		return v1.PodPending
	case running > 0 && unknown == 0:
		return v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		if podIsTerminal && !IsStaticPod(pod) {
			if succeeded == stopped {
				return v1.PodSucceeded
			}
			return v1.PodFailed
		}
		switch {
		case restarting:
			return v1.PodRunning
		case succeeded == stopped:
			return v1.PodSucceeded
		}
		return v1.PodFailed
	}
	if len(regular) == 0 && podIsTerminal {
		return v1.PodFailed
	}
	return v1.PodPending
}

// initSpec returns the init container named name, or nil.
func initSpec(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// maxReasonCacheEntries bounds the reason cache.
const maxReasonCacheEntries = 1000

// StartFailure is the last start error of a container.
type StartFailure struct {
	Reason, Message string
}

// ReasonCache remembers the last start error of each container (LRU of
// 1000 entries keyed by pod UID and container name). A successful start
// removes the entry. It is safe for concurrent use.
type ReasonCache struct {
	mu    sync.Mutex
	order *list.List
	items map[string]*list.Element
}

type reasonEntry struct {
	key string
	val StartFailure
}

// NewReasonCache returns an empty cache.
func NewReasonCache() *ReasonCache {
	return &ReasonCache{order: list.New(), items: map[string]*list.Element{}}
}

func reasonKey(uid types.UID, name string) string { return string(uid) + "_" + name }

// Add records a start failure.
func (r *ReasonCache) Add(uid types.UID, name string, f StartFailure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := reasonKey(uid, name)
	if e, ok := r.items[k]; ok {
		e.Value.(*reasonEntry).val = f
		r.order.MoveToFront(e)
		return
	}
	r.items[k] = r.order.PushFront(&reasonEntry{key: k, val: f})
	if r.order.Len() > maxReasonCacheEntries {
		last := r.order.Back()
		r.order.Remove(last)
		delete(r.items, last.Value.(*reasonEntry).key)
	}
}

// Remove forgets the container's failure after a successful start.
func (r *ReasonCache) Remove(uid types.UID, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.items[reasonKey(uid, name)]; ok {
		r.order.Remove(e)
		delete(r.items, reasonKey(uid, name))
	}
}

// Get returns the container's last start failure.
func (r *ReasonCache) Get(uid types.UID, name string) (StartFailure, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.items[reasonKey(uid, name)]
	if !ok {
		return StartFailure{}, false
	}
	r.order.MoveToFront(e)
	return e.Value.(*reasonEntry).val, true
}
