package runtimemanager

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// Labels put on every sandbox and container the Manager creates. Labels are
// what the Manager selects by; all values are given back unchanged by the
// plugin (a rule of the runtime contract).
const (
	// LabelManagedBy marks objects created by podhost; its value is
	// ManagedByValue. Objects without it are not ours and are ignored.
	LabelManagedBy = "podhost.dev/managed-by"
	// LabelPodUID is the pod's UID: the key that groups a pod's sandboxes
	// and containers.
	LabelPodUID = "podhost.dev/pod-uid"
	// LabelPodNamespace and LabelPodName name the pod.
	LabelPodNamespace = "podhost.dev/pod-namespace"
	LabelPodName      = "podhost.dev/pod-name"
	// LabelContainerName is the container's name in the pod spec
	// (containers only).
	LabelContainerName = "podhost.dev/container-name"
	// LabelContainerAttempt is the container's attempt, equal to its
	// restart count (containers only).
	LabelContainerAttempt = "podhost.dev/container-attempt"
)

// ManagedByValue is the value of LabelManagedBy.
const ManagedByValue = "podhost"

// Annotations carry what a restarted host needs to adopt a container
// without restarting it; they are data, never selected by.
const (
	// AnnotationContainerHash is the hash of the container's spec
	// (specHash); a different hash in the current spec restarts the
	// container.
	AnnotationContainerHash = "podhost.dev/container-hash"
	// AnnotationRestartCount is the container's restart count.
	AnnotationRestartCount = "podhost.dev/restart-count"
	// AnnotationContainerType is "init" or "app".
	AnnotationContainerType = "podhost.dev/container-type"
	// AnnotationGracePeriod is the pod's terminationGracePeriodSeconds when
	// the object was created (sandboxes and containers); KillPod falls back
	// to it for a pod without spec when it is given no grace period.
	AnnotationGracePeriod = "podhost.dev/termination-grace-period"
	// AnnotationTerminationMessagePolicy is the container's
	// terminationMessagePolicy, which decides how its termination message
	// is read once it exited (termination.go); missing means File.
	AnnotationTerminationMessagePolicy = "podhost.dev/termination-message-policy"
)

// Values of AnnotationContainerType.
const (
	containerTypeInit      = "init"
	containerTypeApp       = "app"
	containerTypeEphemeral = "ephemeral"
)

// podSelector selects every object of one pod.
func podSelector(uid string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByValue, LabelPodUID: uid}
}

// managedSelector selects every object the Manager created.
func managedSelector() map[string]string {
	return map[string]string{LabelManagedBy: ManagedByValue}
}

// podLabels are the labels of a pod's sandbox.
func podLabels(pod *v1.Pod) map[string]string {
	return map[string]string{
		LabelManagedBy:    ManagedByValue,
		LabelPodUID:       string(pod.UID),
		LabelPodNamespace: pod.Namespace,
		LabelPodName:      pod.Name,
	}
}

// containerLabels are the labels of one container of the pod.
func containerLabels(pod *v1.Pod, name string, attempt uint32) map[string]string {
	l := podLabels(pod)
	l[LabelContainerName] = name
	l[LabelContainerAttempt] = strconv.FormatUint(uint64(attempt), 10)
	return l
}

// podGracePeriod is the pod's spec grace period, or the default.
func podGracePeriod(pod *v1.Pod) int64 { return lifecycle.GracePeriod(pod, nil) }

// containerAnnotations are the annotations of one container.
func containerAnnotations(pod *v1.Pod, c *v1.Container, kind string, attempt uint32) map[string]string {
	a := map[string]string{
		AnnotationContainerHash: specHash(c),
		AnnotationRestartCount:  strconv.FormatUint(uint64(attempt), 10),
		AnnotationContainerType: kind,
		AnnotationGracePeriod:   strconv.FormatInt(podGracePeriod(pod), 10),
	}
	if c.TerminationMessagePolicy != "" {
		a[AnnotationTerminationMessagePolicy] = string(c.TerminationMessagePolicy)
	}
	if r := resourcesAnnotation(desiredResources(pod, c)); r != "" {
		a[AnnotationResources] = r
	}
	return a
}

// sandboxAnnotations are the annotations of a pod's sandbox: the pod's own
// annotations plus the grace period, its pod-level resources and its pod
// cgroup's values.
func sandboxAnnotations(pod *v1.Pod) map[string]string {
	out := make(map[string]string, len(pod.Annotations)+3)
	for k, v := range pod.Annotations {
		out[k] = v
	}
	out[AnnotationGracePeriod] = strconv.FormatInt(podGracePeriod(pod), 10)
	if r := podResourcesAnnotation(pod); r != "" {
		out[AnnotationPodResources] = r
	}
	if r := podCgroupAnnotation(pod); r != "" {
		out[AnnotationPodCgroup] = r
	}
	return out
}

// specHash is a stable hash of a container's spec but its resources,
// which change in place (resize.go): the JSON encoding (map keys sorted,
// empty fields omitted, so fields added to the API later do not change
// it) hashed with SHA-256, first 16 hex digits.
func specHash(c *v1.Container) string {
	if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 || len(c.Resources.Claims) > 0 {
		cp := *c
		cp.Resources = v1.ResourceRequirements{}
		c = &cp
	}
	return hashOf(c)
}

// sameSpec reports whether hash, a container's AnnotationContainerHash,
// is spec's: its specHash, or the hash of the whole spec that hosts
// before in-place resize wrote (so that their containers are not
// restarted by an upgrade).
func sameSpec(hash string, spec *v1.Container) bool {
	return hash == specHash(spec) || hash == hashOf(spec)
}

func hashOf(c *v1.Container) string {
	b, err := json.Marshal(c)
	if err != nil {
		// A v1.Container always encodes; keep the hash total anyway.
		b = []byte(c.Name)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// parseUint32 reads a label or annotation number; bad or missing gives ok=false.
func parseUint32(s string) (uint32, bool) {
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err == nil
}
