package runtimemanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// In-place resize, the runtime manager's half (lifecycle/resize.go is the
// status's): a running container whose cpu or memory in the spec differ
// from what it was created or last resized with is updated in place
// (UpdateContainerResources), or restarted when a changed resource's
// resizePolicy says RestartContainer, as the kubelet does. Every pod has
// its own cgroup, made by the runtime with the sandbox
// (SandboxConfig.pod_cgroup) below its QoS class's and updated in place
// (UpdateSandboxResources): its values are the kubelet's for the pod
// (podCgroupRequirements: its containers' sums, or its pod-level
// resources, with its overhead), so a resize of a container or of the
// pod-level resources (PodSpec.resources) changes them too. What was
// actuated is written on the container or sandbox when it is created (an
// annotation) and kept in memory after an update; a host that restarts
// has only the annotation, so it may send an update again that changes
// nothing.

// Annotations of what was actuated.
const (
	// AnnotationResources is a container's actuated resources (JSON of
	// actuatedResources) at its creation.
	AnnotationResources = "podhost.dev/resources"
	// AnnotationPodResources is a sandbox's pod-level resources (JSON of
	// the cpu and memory of PodSpec.resources) at its creation.
	AnnotationPodResources = "podhost.dev/pod-resources"
	// AnnotationPodCgroup is the values of a sandbox's pod cgroup at its
	// creation (JSON of podCgroupRequirements). A sandbox of an older
	// host has only AnnotationPodResources, and a pod cgroup only when
	// that is set, made from those values.
	AnnotationPodCgroup = "podhost.dev/pod-cgroup"
)

// actuatedResources are the resources a container runs with: its own cpu
// and memory (the status's resources) and the pod-level limits it took
// where it has none of its own.
type actuatedResources struct {
	Own       v1.ResourceRequirements `json:"own"`
	PodLimits v1.ResourceList         `json:"podLimits,omitempty"`
}

// desiredResources are what the spec asks a container of pod to run with.
func desiredResources(pod *v1.Pod, spec *v1.Container) actuatedResources {
	a := actuatedResources{Own: lifecycle.ResizableResources(&spec.Resources)}
	if pod.Spec.Resources != nil {
		a.PodLimits = lifecycle.ResizableResources(pod.Spec.Resources).Limits
	}
	return a
}

// effective is the container's cpu and memory with the pod-level limits
// in place of the limits it does not set.
func (a actuatedResources) effective() v1.ResourceRequirements {
	r := *a.Own.DeepCopy()
	for name, q := range a.PodLimits {
		if _, ok := r.Limits[name]; ok {
			continue
		}
		if r.Limits == nil {
			r.Limits = v1.ResourceList{}
		}
		r.Limits[name] = q.DeepCopy()
	}
	return r
}

// changed reports which of cpu and memory differ between a and b, as the
// container runs them (pod-level limits included).
func (a actuatedResources) changed(b actuatedResources) (cpu, memory bool) {
	ea, eb := a.effective(), b.effective()
	differs := func(name v1.ResourceName) bool {
		return ea.Requests.Name(name, "").Cmp(*eb.Requests.Name(name, "")) != 0 ||
			ea.Limits.Name(name, "").Cmp(*eb.Limits.Name(name, "")) != 0
	}
	return differs(v1.ResourceCPU), differs(v1.ResourceMemory)
}

// restartsToResize reports whether the resize from actual to desired
// restarts the container: a changed resource whose resizePolicy is
// RestartContainer.
func restartsToResize(spec *v1.Container, actual, desired actuatedResources) bool {
	cpu, memory := actual.changed(desired)
	for _, p := range spec.ResizePolicy {
		if p.RestartPolicy != v1.RestartContainer {
			continue
		}
		if p.ResourceName == v1.ResourceCPU && cpu || p.ResourceName == v1.ResourceMemory && memory {
			return true
		}
	}
	return false
}

func resourcesAnnotation(a actuatedResources) string {
	b, err := json.Marshal(a)
	if err != nil {
		return ""
	}
	return string(b)
}

// parseActuated reads AnnotationResources; nil when missing or bad (a
// container of an older host: its spec's resources are taken as actuated).
func parseActuated(s string) *actuatedResources {
	if s == "" {
		return nil
	}
	var a actuatedResources
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil
	}
	return &a
}

// parsePodResources reads AnnotationPodResources; nil when missing or bad.
func parsePodResources(s string) *v1.ResourceRequirements {
	if s == "" {
		return nil
	}
	var r v1.ResourceRequirements
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil
	}
	return &r
}

// podCgroup is the sandbox's pod cgroup: the kubelet's pod cgroup values
// (shares from the cpu request, quota from the cpu limit, the memory
// limit) of podCgroupRequirements.
func podCgroup(pod *v1.Pod) *runtimev1.PodCgroup {
	return &runtimev1.PodCgroup{QosClass: string(lifecycle.PodQOS(pod)), Resources: podCgroupResources(podCgroupRequirements(pod)), Required: podCgroupRequired(pod)}
}

// podCgroupRequired reports whether only the pod cgroup honours some of
// pod's fields, its pod-level resources or its overhead; a runtime may run
// any other pod without one (PodCgroup.required).
func podCgroupRequired(pod *v1.Pod) bool {
	return pod.Spec.Resources != nil || len(pod.Spec.Overhead) > 0
}

// podCgroupRequirements are the values of pod's own cgroup, as the
// kubelet computes them (its ResourceConfigForPod): the cpu request is
// the pod's (its pod-level request, else its containers' as the
// scheduler sums them, init containers and sidecars included, plus its
// overhead); the cpu and memory limits are the pod's likewise, set for a
// Guaranteed pod, for a Burstable one only where every container (or the
// pod level) declares that limit, and never for a BestEffort pod, whose
// cgroup gets the least cpu weight.
func podCgroupRequirements(pod *v1.Pod) v1.ResourceRequirements {
	qos := lifecycle.PodQOS(pod)
	if qos == v1.PodQOSBestEffort {
		return v1.ResourceRequirements{}
	}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	out := v1.ResourceRequirements{}
	if q, ok := reqs[v1.ResourceCPU]; ok {
		out.Requests = v1.ResourceList{v1.ResourceCPU: q}
	}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		q, ok := limits[name]
		if !ok || q.IsZero() || qos != v1.PodQOSGuaranteed && !limitDeclared(pod, name) {
			continue
		}
		if out.Limits == nil {
			out.Limits = v1.ResourceList{}
		}
		out.Limits[name] = q
	}
	return out
}

// limitDeclared reports whether the pod's cgroup is limited in name: its
// pod-level resources set that limit, or every init and app container
// does, as the kubelet decides.
func limitDeclared(pod *v1.Pod, name v1.ResourceName) bool {
	if r := pod.Spec.Resources; r != nil {
		if q, ok := r.Limits[name]; ok && !q.IsZero() {
			return true
		}
	}
	for _, l := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range l {
			if q, ok := l[i].Resources.Limits[name]; !ok || q.IsZero() {
				return false
			}
		}
	}
	return true
}

func podCgroupResources(r v1.ResourceRequirements) *runtimev1.Resources {
	cpuReq, cpuLim := milli(r.Requests, v1.ResourceCPU), milli(r.Limits, v1.ResourceCPU)
	if cpuReq == 0 {
		cpuReq = cpuLim
	}
	out := &runtimev1.Resources{
		CpuShares:          cpuShares(cpuReq),
		MemoryLimitInBytes: value(r.Limits, v1.ResourceMemory),
	}
	if cpuLim > 0 {
		out.CpuPeriod, out.CpuQuota = quotaPeriod, cpuQuota(cpuLim)
	}
	return out
}

// podResourcesAnnotation is AnnotationPodResources of pod, "" without
// pod-level resources.
func podResourcesAnnotation(pod *v1.Pod) string {
	if pod.Spec.Resources == nil {
		return ""
	}
	b, err := json.Marshal(lifecycle.ResizableResources(pod.Spec.Resources))
	if err != nil {
		return ""
	}
	return string(b)
}

// podCgroupAnnotation is AnnotationPodCgroup of pod.
func podCgroupAnnotation(pod *v1.Pod) string {
	b, err := json.Marshal(podCgroupRequirements(pod))
	if err != nil {
		return ""
	}
	return string(b)
}

// resizeAction updates one running container in place.
type resizeAction struct {
	id, name        string
	spec            *v1.Container
	actual, desired actuatedResources
}

// podResize updates the pod cgroup of the ready sandbox from actual to
// desired (podCgroupRequirements), unchanged when they are the same; then
// its pod-level resources are level (nil: none).
type podResize struct {
	sandboxID       string
	actual, desired v1.ResourceRequirements
	level           *v1.ResourceRequirements
}

// changes reports whether the pod cgroup's values change.
func (pr *podResize) changes() bool { return !lifecycle.SameResources(pr.actual, pr.desired) }

// sandboxResources are a sandbox's pod-level resources (nil: none) and
// its pod cgroup's values as actuated.
type sandboxResources struct {
	level  *v1.ResourceRequirements
	cgroup v1.ResourceRequirements
}

// resized remembers what updates actuated, by container or sandbox id,
// over what the annotations say.
type resized struct {
	mu         sync.Mutex
	containers map[string]actuatedResources
	sandboxes  map[string]sandboxResources
}

func (r *resized) setContainer(id string, a actuatedResources) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.containers == nil {
		r.containers = map[string]actuatedResources{}
	}
	r.containers[id] = a
}

func (r *resized) setSandbox(id string, res sandboxResources) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sandboxes == nil {
		r.sandboxes = map[string]sandboxResources{}
	}
	r.sandboxes[id] = res
}

// apply puts what updates actuated over the listed state, and forgets
// what the runtime no longer lists.
func (r *resized) apply(s *podState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range s.containers {
		if a, ok := r.containers[s.containers[i].id]; ok {
			a := a
			s.containers[i].actuated = &a
		}
	}
	for i := range s.sandboxes {
		if res, ok := r.sandboxes[s.sandboxes[i].id]; ok {
			cg := res.cgroup
			s.sandboxes[i].podResources, s.sandboxes[i].podCgroup = res.level, &cg
		}
	}
}

// forget drops the records of a removed container or sandbox.
func (r *resized) forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.containers, id)
	delete(r.sandboxes, id)
}

// planResize decides, for a running container with the current spec hash,
// whether its resources need an update in place or a restart.
func (p *planner) planResize(spec *v1.Container, c *containerInfo, kind string) {
	desired := desiredResources(p.pod, spec)
	actual := desired
	if c.actuated != nil {
		actual = *c.actuated
	}
	if cpu, memory := actual.changed(desired); !cpu && !memory {
		if !lifecycle.SameResources(actual.Own, desired.Own) {
			// Only what the runtime does not hold changed (a memory
			// request): nothing to send, the record follows.
			p.a.resize = append(p.a.resize, resizeAction{id: c.id, name: c.name, spec: spec, actual: actual, desired: desired})
		}
		return
	}
	if restartsToResize(spec, actual, desired) {
		p.a.kill = append(p.a.kill, killAction{id: c.id, name: c.name, reason: "resized, and its resize policy restarts it"})
		p.startNew(spec, kind, "resized")
		return
	}
	p.a.resize = append(p.a.resize, resizeAction{id: c.id, name: c.name, spec: spec, actual: actual, desired: desired})
}

// planPodResize decides whether the ready sandbox's pod cgroup needs an
// update, or only the record of its pod-level resources (a memory request
// changed, which no cgroup holds). A sandbox without a pod cgroup (run by
// an older host for a pod without pod-level resources) keeps none.
func (p *planner) planPodResize(sb *sandboxInfo) {
	if sb == nil || !sb.ready || sb.podCgroup == nil {
		return
	}
	pr := &podResize{sandboxID: sb.id, actual: *sb.podCgroup, desired: podCgroupRequirements(p.pod)}
	if p.pod.Spec.Resources != nil {
		level := lifecycle.ResizableResources(p.pod.Spec.Resources)
		pr.level = &level
	}
	if !pr.changes() && sameLevel(sb.podResources, pr.level) {
		return
	}
	p.a.podResize = pr
}

// sameLevel reports whether two records of pod-level resources (nil:
// none) are the same.
func sameLevel(a, b *v1.ResourceRequirements) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return lifecycle.SameResources(*a, *b)
}

// resize actuates the planned resizes: the pod cgroup first grows to what
// both the old and the new values allow, then the containers change, then
// the pod cgroup takes its new values, so that no container is ever
// limited above its pod nor a pod below its containers.
func (m *Manager) resize(ctx context.Context, pod *v1.Pod, a *actions) error {
	if a.podResize == nil && len(a.resize) == 0 {
		return nil
	}
	if err := m.checkMemoryDecrease(ctx, a); err != nil {
		return m.resizeFailed(pod, "pod", err)
	}
	pr := a.podResize
	// Before a shrink the widened values are still the old ones.
	if pr != nil && pr.changes() && !lifecycle.SameResources(widest(pr.actual, pr.desired), pr.actual) {
		if err := m.updateSandbox(ctx, pod, pr.sandboxID, widest(pr.actual, pr.desired)); err != nil {
			return m.resizeFailed(pod, "pod", err)
		}
	}
	var errs []error
	for _, r := range a.resize {
		cfg := m.resourcesFor(pod, r.spec, r.desired)
		if _, err := m.rt.UpdateContainerResources(ctx, &runtimev1.UpdateContainerResourcesRequest{ContainerId: r.id, Resources: cfg}); err != nil {
			errs = append(errs, m.resizeFailed(pod, "container "+r.name, callError("updating resources of container "+r.name, err)))
			continue
		}
		m.resized.setContainer(r.id, r.desired)
	}
	if pr != nil && len(errs) == 0 {
		// After a growth the widened values are already the new ones.
		if pr.changes() && !lifecycle.SameResources(widest(pr.actual, pr.desired), pr.desired) {
			if err := m.updateSandbox(ctx, pod, pr.sandboxID, pr.desired); err != nil {
				return m.resizeFailed(pod, "pod", err)
			}
		}
		m.resized.setSandbox(pr.sandboxID, sandboxResources{level: pr.level, cgroup: pr.desired})
	}
	if len(errs) == 0 {
		m.resizeErrors.set(pod.UID, "")
		m.event(pod, lifecycle.EventNormal, EventResizeCompleted, "Pod resize completed")
	}
	return errors.Join(errs...)
}

// checkMemoryDecrease refuses, as the kubelet does, a resize that lowers a
// memory limit (of the pod cgroup or of a container) to or below what the
// pod or container uses now: the kernel would reclaim or OOM-kill instead.
// Usage is the runtime's (ListStats, usage_bytes); a pod's is its sandbox's,
// or its containers' sum when the runtime does not report the sandbox's.
// A container the runtime reports no usage of is not judged, nor is
// anything when the runtime serves no stats at all.
func (m *Manager) checkMemoryDecrease(ctx context.Context, a *actions) error {
	if !decreasesMemory(a) {
		return nil
	}
	stats, err := m.ListStats(ctx)
	switch {
	case errors.Is(err, ErrNoStats):
		return nil // a runtime without stats cannot tell: not judged
	case err != nil:
		return fmt.Errorf("cannot decrease memory limits: reading memory usage: %w", err)
	}
	return memoryBelowUsage(a, stats)
}

// decreasesMemory reports whether the planned resizes lower a memory
// limit.
func decreasesMemory(a *actions) bool {
	if pr := a.podResize; pr != nil {
		if _, ok := memoryDecrease(pr.actual.Limits, pr.desired.Limits); ok {
			return true
		}
	}
	for _, r := range a.resize {
		if _, ok := memoryDecrease(r.actual.effective().Limits, r.desired.effective().Limits); ok {
			return true
		}
	}
	return false
}

// memoryBelowUsage is the kubelet's error for each lowered memory limit
// that is at or below the usage in stats; nil when there is none.
func memoryBelowUsage(a *actions, stats *runtimev1.ListStatsResponse) error {
	var errs []error
	if pr := a.podResize; pr != nil {
		if limit, ok := memoryDecrease(pr.actual.Limits, pr.desired.Limits); ok {
			var usage uint64
			known := false
			for _, sb := range stats.GetSandboxes() {
				if sb.GetSandboxId() == pr.sandboxID && sb.GetMemory() != nil {
					usage, known = sb.GetMemory().GetUsageBytes(), true
				}
			}
			if !known {
				for _, c := range stats.GetContainers() {
					if c.GetSandboxId() == pr.sandboxID {
						usage += c.GetMemory().GetUsageBytes()
					}
				}
			}
			if usage >= uint64(limit) {
				errs = append(errs, fmt.Errorf("attempting to set pod memory limit (%d) below current usage (%d)", limit, usage))
			}
		}
	}
	for _, r := range a.resize {
		limit, ok := memoryDecrease(r.actual.effective().Limits, r.desired.effective().Limits)
		if !ok {
			continue
		}
		for _, c := range stats.GetContainers() {
			if c.GetContainerId() == r.id && c.GetMemory() != nil && c.GetMemory().GetUsageBytes() >= uint64(limit) {
				errs = append(errs, fmt.Errorf("attempting to set container %q memory limit (%d) below current usage (%d)",
					r.name, limit, c.GetMemory().GetUsageBytes()))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cannot decrease memory limits: %w", errors.Join(errs...))
	}
	return nil
}

// memoryDecrease is the new memory limit when it is set and lower than the
// old one (or the old one had none).
func memoryDecrease(old, new v1.ResourceList) (int64, bool) {
	n, ok := new[v1.ResourceMemory]
	if !ok {
		return 0, false
	}
	o, had := old[v1.ResourceMemory]
	if had && n.Cmp(o) >= 0 {
		return 0, false
	}
	return n.Value(), true
}

// resizeErrors keeps the last resize error of each pod, until a resize
// of it completes: the status reports it (PodResizeInProgress, reason
// Error) as the kubelet's does.
type resizeErrors struct {
	mu   sync.Mutex
	errs map[types.UID]string
}

func (r *resizeErrors) set(uid types.UID, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if msg == "" {
		delete(r.errs, uid)
		return
	}
	if r.errs == nil {
		r.errs = map[types.UID]string{}
	}
	r.errs[uid] = msg
}

func (r *resizeErrors) get(uid types.UID) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs[uid]
}

// updateSandbox sets the pod cgroup of pod's sandbox id to r. A sandbox the
// runtime ran without a pod cgroup it was allowed to leave out (not
// required: PodCgroup.required) has nothing to update.
func (m *Manager) updateSandbox(ctx context.Context, pod *v1.Pod, id string, r v1.ResourceRequirements) error {
	_, err := m.rt.UpdateSandboxResources(ctx, &runtimev1.UpdateSandboxResourcesRequest{SandboxId: id, Resources: podCgroupResources(r)})
	if status.Code(err) == codes.FailedPrecondition && !podCgroupRequired(pod) {
		return nil
	}
	return callError("updating the pod cgroup", err)
}

func (m *Manager) resizeFailed(pod *v1.Pod, what string, err error) error {
	m.resizeErrors.set(pod.UID, err.Error())
	m.event(pod, lifecycle.EventWarning, EventResizeError, "Resize of %s failed: %v", what, err)
	return fmt.Errorf("resizing %s: %w", what, err)
}

// widest is, resource by resource, the larger request and limit of a and
// b; a missing limit is no limit, the largest.
func widest(a, b v1.ResourceRequirements) v1.ResourceRequirements {
	out := v1.ResourceRequirements{Requests: v1.ResourceList{}, Limits: v1.ResourceList{}}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		ra, rb := a.Requests.Name(name, ""), b.Requests.Name(name, "")
		if ra.Cmp(*rb) >= 0 {
			out.Requests[name] = ra.DeepCopy()
		} else {
			out.Requests[name] = rb.DeepCopy()
		}
		la, okA := a.Limits[name]
		lb, okB := b.Limits[name]
		switch {
		case !okA || !okB:
		case la.Cmp(lb) >= 0:
			out.Limits[name] = la.DeepCopy()
		default:
			out.Limits[name] = lb.DeepCopy()
		}
	}
	return out
}

// resourcesChanged reports whether a created container's recorded
// resources differ from what the spec now asks: it is created again
// rather than started with the old ones.
func (c *containerInfo) resourcesChanged(pod *v1.Pod, spec *v1.Container) bool {
	if c.actuated == nil {
		return false
	}
	cpu, memory := c.actuated.changed(desiredResources(pod, spec))
	return cpu || memory
}
