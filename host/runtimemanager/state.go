package runtimemanager

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// sandboxInfo is one sandbox of a pod as the runtime lists it.
type sandboxInfo struct {
	id        string
	attempt   uint32
	ready     bool
	createdAt time.Time
	ip        string
	// podResources are the pod-level resources its pod cgroup was made
	// or last updated with; nil without. podCgroup are its pod cgroup's
	// values (podCgroupRequirements); nil without a pod cgroup.
	podResources *v1.ResourceRequirements
	podCgroup    *v1.ResourceRequirements
}

// containerInfo is one container of a pod as the runtime lists it, with
// what its labels and annotations say.
type containerInfo struct {
	id, sandboxID string
	name          string
	// kind is containerTypeInit or containerTypeApp ("" if unknown).
	kind string
	// restartCount comes from the annotation, else the metadata attempt.
	restartCount uint32
	hash         string
	state        lifecycle.ContainerState
	createdAt    time.Time
	startedAt    time.Time
	finishedAt   time.Time
	exitCode     int32
	reason       string
	message      string
	imageRef     string
	// messagePolicy is the terminationMessagePolicy from the annotation;
	// termination is the termination message read once it exited
	// (readTerminationMessages), added to the runtime's message.
	messagePolicy string
	termination   string
	// startCut: its StartContainer was cut short (cutStarts) and it never
	// started. It is shown as created and created again.
	startCut bool
	// actuated are the resources it was created or last resized with;
	// nil when its creator did not record them.
	actuated *actuatedResources
	// run is its pod run (AnnotationPodRun); ended marks one of an ended
	// run in the newest sandbox (markEnded).
	run   uint32
	ended bool
}

// podState is the runtime's view of one pod: its sandboxes and containers,
// newest first.
type podState struct {
	uid             types.UID
	name, namespace string
	grace           int64 // from the annotation; 0 if unknown
	sandboxes       []sandboxInfo
	containers      []containerInfo
}

// newestSandbox returns the newest sandbox, or nil.
func (s *podState) newestSandbox() *sandboxInfo {
	if len(s.sandboxes) == 0 {
		return nil
	}
	return &s.sandboxes[0]
}

// newest returns the newest container of the name, in the sandbox when
// sandboxID is not empty, or nil.
func (s *podState) newest(name, sandboxID string) *containerInfo {
	for i := range s.containers {
		c := &s.containers[i]
		if c.name == name && (sandboxID == "" || c.sandboxID == sandboxID) {
			return c
		}
	}
	return nil
}

// hasRunning reports whether a container runs (or may run) or a sandbox is
// ready.
func (s *podState) hasRunning() bool {
	for _, sb := range s.sandboxes {
		if sb.ready {
			return true
		}
	}
	for _, c := range s.containers {
		if c.state != lifecycle.ContainerExited {
			return true
		}
	}
	return false
}

func fromUnixNano(ns int64) time.Time {
	if ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

var containerStates = map[runtimev1.ContainerState]lifecycle.ContainerState{
	runtimev1.ContainerState_CONTAINER_STATE_CREATED: lifecycle.ContainerCreated,
	runtimev1.ContainerState_CONTAINER_STATE_RUNNING: lifecycle.ContainerRunning,
	runtimev1.ContainerState_CONTAINER_STATE_EXITED:  lifecycle.ContainerExited,
	runtimev1.ContainerState_CONTAINER_STATE_UNKNOWN: lifecycle.ContainerUnknown,
}

func sandboxFromProto(sb *runtimev1.Sandbox) sandboxInfo {
	return sandboxInfo{
		id:        sb.GetId(),
		attempt:   sb.GetMetadata().GetAttempt(),
		ready:     sb.GetState() == runtimev1.SandboxState_SANDBOX_STATE_READY,
		createdAt: fromUnixNano(sb.GetCreatedAt()),
		ip:        sb.GetIp(),

		podResources: parsePodResources(sb.GetAnnotations()[AnnotationPodResources]),
		podCgroup:    sandboxPodCgroup(sb.GetAnnotations()),
	}
}

// sandboxPodCgroup is the values of the pod cgroup a sandbox was run
// with, from its annotations; nil when it has none: run by an older host
// without pod-level resources.
func sandboxPodCgroup(ann map[string]string) *v1.ResourceRequirements {
	if r := parsePodResources(ann[AnnotationPodCgroup]); r != nil {
		return r
	}
	if r := parsePodResources(ann[AnnotationPodResources]); r != nil {
		// An older host made it from the pod-level resources.
		cg := lifecycle.ResizableResources(r)
		return &cg
	}
	return nil
}

func containerFromProto(c *runtimev1.Container) containerInfo {
	name := c.GetLabels()[LabelContainerName]
	if name == "" {
		name = c.GetMetadata().GetName()
	}
	restarts, ok := parseUint32(c.GetAnnotations()[AnnotationRestartCount])
	if !ok {
		restarts = c.GetMetadata().GetAttempt()
	}
	state, ok := containerStates[c.GetState()]
	if !ok {
		state = lifecycle.ContainerUnknown
	}
	return containerInfo{
		id:            c.GetId(),
		sandboxID:     c.GetSandboxId(),
		name:          name,
		kind:          c.GetAnnotations()[AnnotationContainerType],
		restartCount:  restarts,
		hash:          c.GetAnnotations()[AnnotationContainerHash],
		state:         state,
		createdAt:     fromUnixNano(c.GetCreatedAt()),
		startedAt:     fromUnixNano(c.GetStartedAt()),
		finishedAt:    fromUnixNano(c.GetFinishedAt()),
		exitCode:      c.GetExitCode(),
		reason:        c.GetReason(),
		message:       c.GetMessage(),
		imageRef:      c.GetImageRef(),
		messagePolicy: c.GetAnnotations()[AnnotationTerminationMessagePolicy],
		actuated:      parseActuated(c.GetAnnotations()[AnnotationResources]),
		run:           runOf(c.GetAnnotations()),
	}
}

// buildStates groups listed sandboxes and containers by the pod-UID label
// into pod states, each sorted newest first. Objects without the label are
// skipped.
func buildStates(sandboxes []*runtimev1.Sandbox, containers []*runtimev1.Container) map[types.UID]*podState {
	out := map[types.UID]*podState{}
	get := func(labels, annotations map[string]string) *podState {
		uid := types.UID(labels[LabelPodUID])
		if uid == "" {
			return nil
		}
		s, ok := out[uid]
		if !ok {
			s = &podState{uid: uid}
			out[uid] = s
		}
		if s.name == "" {
			s.name, s.namespace = labels[LabelPodName], labels[LabelPodNamespace]
		}
		if g, err := strconv.ParseInt(annotations[AnnotationGracePeriod], 10, 64); err == nil && s.grace == 0 {
			s.grace = g
		}
		return s
	}
	for _, sb := range sandboxes {
		if s := get(sb.GetLabels(), sb.GetAnnotations()); s != nil {
			s.sandboxes = append(s.sandboxes, sandboxFromProto(sb))
		}
	}
	for _, c := range containers {
		if s := get(c.GetLabels(), c.GetAnnotations()); s != nil {
			s.containers = append(s.containers, containerFromProto(c))
		}
	}
	for _, s := range out {
		slices.SortStableFunc(s.sandboxes, func(a, b sandboxInfo) int {
			return cmp.Or(b.createdAt.Compare(a.createdAt), cmp.Compare(b.attempt, a.attempt))
		})
		slices.SortStableFunc(s.containers, func(a, b containerInfo) int {
			return cmp.Or(b.createdAt.Compare(a.createdAt), cmp.Compare(b.restartCount, a.restartCount))
		})
	}
	return out
}

// list lists the objects the selector matches and groups them by pod.
func (m *Manager) list(ctx context.Context, selector map[string]string) (map[types.UID]*podState, error) {
	sbs, err := m.rt.ListSandboxes(ctx, &runtimev1.ListSandboxesRequest{Filter: &runtimev1.SandboxFilter{LabelSelector: selector}})
	if err != nil {
		return nil, callError("listing sandboxes", err)
	}
	cs, err := m.rt.ListContainers(ctx, &runtimev1.ListContainersRequest{Filter: &runtimev1.ContainerFilter{LabelSelector: selector}})
	if err != nil {
		return nil, callError("listing containers", err)
	}
	return buildStates(sbs.GetSandboxes(), cs.GetContainers()), nil
}

// podState lists one pod. A pod the runtime does not hold gives an empty
// state.
func (m *Manager) podState(ctx context.Context, uid types.UID) (*podState, error) {
	states, err := m.list(ctx, podSelector(string(uid)))
	if err != nil {
		return nil, err
	}
	s, ok := states[uid]
	if !ok {
		return &podState{uid: uid}, nil
	}
	if err := m.fillDetails(ctx, s); err != nil {
		return nil, err
	}
	m.cutStarts.mark(s)
	m.resized.apply(s)
	return s, nil
}

// fillDetails asks ContainerStatus for what a listing may leave out: the
// start and finish times, exit code, reason and message of containers
// that started, unless it already read them in the listed state
// (knownDetails). CRI's ListContainers carries none of them, so a plugin
// that maps it straight gives none; exit codes, restart policies and
// back-off need them.
//
// A container gone between the listing and its status (NOT_FOUND) is
// unknown: the listing's exit code is no evidence (0 when it carries
// none), and an exit 0 without evidence could turn a Never or OnFailure
// pod Succeeded.
func (m *Manager) fillDetails(ctx context.Context, s *podState) error {
	for i := range s.containers {
		c := &s.containers[i]
		switch {
		case c.state == lifecycle.ContainerCreated,
			c.state == lifecycle.ContainerRunning && !c.startedAt.IsZero(),
			c.state == lifecycle.ContainerExited && !c.finishedAt.IsZero():
			continue
		}
		if d, ok := m.details.lookup(s.uid, c.id, c.state); ok {
			c.startedAt, c.finishedAt = d.startedAt, d.finishedAt
			c.exitCode, c.reason, c.message = d.exitCode, d.reason, d.message
			continue
		}
		resp, err := m.rt.ContainerStatus(ctx, &runtimev1.ContainerStatusRequest{ContainerId: c.id})
		if err = callError("container status "+c.id, err); errors.Is(err, ErrNotFound) {
			c.state, c.exitCode, c.reason, c.message = lifecycle.ContainerUnknown, 0, "", ""
			continue
		} else if err != nil {
			return err
		}
		d := containerFromProto(resp.GetContainer())
		if d.state == lifecycle.ContainerCreated {
			continue
		}
		c.state, c.startedAt, c.finishedAt = d.state, d.startedAt, d.finishedAt
		c.exitCode, c.reason, c.message = d.exitCode, d.reason, d.message
	}
	m.details.keep(s)
	return nil
}

// runningPod is the lifecycle view of a listed pod.
func (s *podState) runningPod() *lifecycle.RunningPod {
	rp := &lifecycle.RunningPod{ID: s.uid, Name: s.name, Namespace: s.namespace}
	if sb := s.newestSandbox(); sb != nil {
		rp.SandboxReady = sb.ready
	}
	for _, c := range s.containers {
		rp.Containers = append(rp.Containers, lifecycle.RunningContainer{ID: c.id, Name: c.name, State: c.shownState()})
	}
	return rp
}

// shownState is the state the lifecycle sees: a container whose start was
// cut short is still to be started, not exited.
func (c *containerInfo) shownState() lifecycle.ContainerState {
	if c.startCut {
		return lifecycle.ContainerCreated
	}
	return c.state
}

// podStatus is the lifecycle's detailed status of a listed pod.
func (s *podState) podStatus(name, namespace string) *lifecycle.PodStatus {
	st := &lifecycle.PodStatus{ID: s.uid, Name: name, Namespace: namespace}
	s.markEnded()
	if sb := s.newestSandbox(); sb != nil {
		st.SandboxReady = sb.ready
		if sb.ready && sb.ip != "" {
			st.IPs = []string{sb.ip}
		}
		st.Resources = sb.podResources
		if st.Resources == nil && sb.podCgroup != nil {
			// A pod cgroup without pod-level resources: none actuated,
			// so that pod-level resources added later are a resize in
			// progress until they are.
			st.Resources = &v1.ResourceRequirements{}
		}
	}
	for _, c := range s.containers {
		cs := lifecycle.ContainerStatus{
			ID: c.id, Name: c.name, State: c.state,
			CreatedAt: c.createdAt, StartedAt: c.startedAt, FinishedAt: c.finishedAt,
			ExitCode: c.exitCode, Reason: c.reason, Message: joinMessage(c.message, c.termination),
			RestartCount: int32(c.restartCount), ImageID: c.imageRef,
			ResetByRestartAll: c.ended,
		}
		if c.actuated != nil {
			cs.Resources = &c.actuated.Own
		}
		if c.startCut {
			cs.State, cs.FinishedAt, cs.ExitCode, cs.Reason, cs.Message = c.shownState(), time.Time{}, 0, "", ""
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return st
}

// ListPods returns every pod the runtime holds for podhost, with all its
// containers; the newest sandbox decides SandboxReady.
func (m *Manager) ListPods(ctx context.Context) ([]*lifecycle.RunningPod, error) {
	states, err := m.list(ctx, managedSelector())
	if err != nil {
		return nil, err
	}
	out := make([]*lifecycle.RunningPod, 0, len(states))
	for _, s := range states {
		m.cutStarts.mark(s)
		out = append(out, s.runningPod())
	}
	slices.SortFunc(out, func(a, b *lifecycle.RunningPod) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// PodStatus returns the runtime's status of one pod; a pod the runtime
// does not hold gives an empty status and no error. The message of an
// exited container carries its termination message, read from the host's
// files at each call as the kubelet reads it at each inspection (the
// lifecycle asks only when the pod's containers changed).
func (m *Manager) PodStatus(ctx context.Context, uid types.UID, name, namespace string) (*lifecycle.PodStatus, error) {
	s, err := m.podState(ctx, uid)
	if err != nil {
		return nil, err
	}
	m.readTerminationMessages(s)
	st := s.podStatus(name, namespace)
	st.ResizeError = m.resizeErrors.get(uid)
	return st, nil
}

// joinMessage adds a container's termination message to the runtime's
// message, as the kubelet does.
func joinMessage(runtime, termination string) string {
	if runtime == "" || termination == "" {
		return runtime + termination
	}
	return runtime + ": " + termination
}
