package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/podhost/podhost/lifecycle"
)

// Reason is the status reason and event reason of an evicted pod, the
// kubelet's.
const Reason = "Evicted"

// GracePeriodSeconds is the grace period of a local storage eviction, the
// kubelet's immediate eviction grace period.
const GracePeriodSeconds int64 = 1

// The signals of the three rules, the kubelet's names (they label its
// eviction metric).
const (
	SignalEmptyDirLimit  = "emptydirfs.limit"
	SignalPodLimit       = "ephemeralpodfs.limit"
	SignalContainerLimit = "ephemeralcontainerfs.limit"
)

// systemCriticalPriority is the lowest priority of a critical pod
// (scheduling.SystemCriticalPriority).
const systemCriticalPriority = 2 * 1000000000

// Usage is one pod's use of the node's local storage, in bytes.
type Usage struct {
	// Containers by name: the container's writable layer and logs.
	Containers map[string]ContainerUsage
	// EmptyDirs by volume name, of the disk-backed emptyDir volumes only.
	EmptyDirs map[string]uint64
	// DedicatedImageFs says the runtime keeps its images and writable
	// layers on another filesystem than the host's root directory: a
	// container's own limit then counts its logs only, as the kubelet's.
	DedicatedImageFs bool
}

// ContainerUsage is one container's local storage.
type ContainerUsage struct {
	// WritableLayer is the container's root filesystem layer.
	WritableLayer uint64
	// Logs are the container's log files.
	Logs uint64
}

// total is all of the pod's local ephemeral storage: every container's
// writable layer and logs, and its emptyDirs on disk (a Memory or
// HugePages emptyDir is not, whatever u says of it).
func total(pod *v1.Pod, u Usage) uint64 {
	var t uint64
	for _, c := range u.Containers {
		t += c.WritableLayer + c.Logs
	}
	for _, vol := range pod.Spec.Volumes {
		if vol.EmptyDir != nil && vol.EmptyDir.Medium == v1.StorageMediumDefault {
			t += u.EmptyDirs[vol.Name]
		}
	}
	return t
}

// Eviction is what Decide found: the rule (Signal) and the message of the
// pod's status and event, the kubelet's.
type Eviction struct {
	Signal  string
	Message string
}

// Decide says whether the pod must be evicted for its local storage use,
// with the kubelet's rules in the kubelet's order: an emptyDir (not
// Memory-backed) using more than its sizeLimit; the pod using more than
// the sum of its containers' ephemeral-storage limits (PodLimits: app and
// sidecar containers summed, the largest init container if larger, the
// overhead added); a container whose writable layer (unless the image
// filesystem is dedicated) and logs use more than its own limit. A zero limit is no limit. It does not look at
// whether the pod may be evicted (see Critical).
func Decide(pod *v1.Pod, u Usage) (Eviction, bool) {
	for _, vol := range pod.Spec.Volumes {
		e := vol.EmptyDir
		if e == nil || e.Medium != v1.StorageMediumDefault || e.SizeLimit == nil || e.SizeLimit.Sign() <= 0 {
			continue
		}
		used, ok := u.EmptyDirs[vol.Name]
		if ok && over(used, *e.SizeLimit) {
			return Eviction{Signal: SignalEmptyDirLimit,
				Message: fmt.Sprintf("Usage of EmptyDir volume %q exceeds the limit %q. ", vol.Name, e.SizeLimit.String())}, true
		}
	}
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	if limit, ok := limits[v1.ResourceEphemeralStorage]; ok && over(total(pod, u), limit) {
		return Eviction{Signal: SignalPodLimit,
			Message: fmt.Sprintf("Pod ephemeral local storage usage exceeds the total limit of containers %s. ", limit.String())}, true
	}
	for _, c := range pod.Spec.Containers {
		limit, ok := c.Resources.Limits[v1.ResourceEphemeralStorage]
		if !ok || limit.IsZero() {
			continue
		}
		cu, ok := u.Containers[c.Name]
		used := cu.Logs
		if !u.DedicatedImageFs {
			used += cu.WritableLayer
		}
		if ok && over(used, limit) {
			return Eviction{Signal: SignalContainerLimit,
				Message: fmt.Sprintf("Container %s exceeded its local ephemeral storage limit %q. ", c.Name, limit.String())}, true
		}
	}
	return Eviction{}, false
}

// over reports whether used bytes are more than limit.
func over(used uint64, limit resource.Quantity) bool {
	if limit.Sign() <= 0 {
		return used > 0
	}
	return used > uint64(limit.Value())
}

// Critical reports whether the pod is one the kubelet never evicts: a
// static pod (its config source not the API), a mirror pod, or one of
// system-critical priority.
func Critical(pod *v1.Pod) bool {
	if lifecycle.IsStaticPod(pod) || lifecycle.IsMirrorPod(pod) {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
}

// FailedStatus makes st the status of a pod evicted for e: Failed with
// the kubelet's reason and message. The kubelet adds no condition for a
// local storage eviction.
func FailedStatus(st *v1.PodStatus, e Eviction) {
	st.Phase, st.Reason, st.Message = v1.PodFailed, Reason, e.Message
}
