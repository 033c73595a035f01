package downwardapi

import (
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// defaulted are the limits an unset (or zero) limit of a container takes
// from the node's allocatable, as under the kubelet.
var defaulted = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage}

// WithNodeLimits returns a copy of c whose unset or zero cpu, memory and
// ephemeral-storage limits are the node's allocatable of that resource.
func WithNodeLimits(c *v1.Container, allocatable v1.ResourceList) *v1.Container {
	out := c.DeepCopy()
	if out.Resources.Limits == nil {
		out.Resources.Limits = v1.ResourceList{}
	}
	for _, name := range defaulted {
		if q, ok := out.Resources.Limits[name]; ok && !q.IsZero() {
			continue
		}
		if a, ok := allocatable[name]; ok {
			out.Resources.Limits[name] = a.DeepCopy()
		}
	}
	return out
}

// findContainer is the app or init container of pod named name.
func findContainer(pod *v1.Pod, name string) (*v1.Container, bool) {
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i], true
			}
		}
	}
	return nil, false
}

// VolumeResource is the value of a downwardAPI volume item's
// resourceFieldRef: the named container's resource, its limits defaulted
// to the node's allocatable.
func VolumeResource(pod *v1.Pod, sel *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error) {
	c, ok := findContainer(pod, sel.ContainerName)
	if !ok {
		return "", fmt.Errorf("resourceFieldRef: no container %q in the pod", sel.ContainerName)
	}
	return ContainerResource(WithNodeLimits(c, allocatable), sel)
}

// EnvResource is the value of container c's env resourceFieldRef. With
// no containerName it is c's own resource; with one, that container's.
// Like the kubelet, the limits of c and of the pod's app containers are
// defaulted to the node's allocatable, an init container named by
// containerName is taken as written.
func EnvResource(pod *v1.Pod, c *v1.Container, sel *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error) {
	if sel.ContainerName == "" {
		return ContainerResource(WithNodeLimits(c, allocatable), sel)
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == sel.ContainerName {
			return ContainerResource(WithNodeLimits(&pod.Spec.Containers[i], allocatable), sel)
		}
	}
	named, ok := findContainer(pod, sel.ContainerName)
	if !ok {
		return "", fmt.Errorf("resourceFieldRef: no container %q in the pod", sel.ContainerName)
	}
	return ContainerResource(named, sel)
}

// ContainerResource is c's resource sel names, divided by sel's divisor
// (1 when zero) and rounded up: cpu in thousandths of a core, the others
// in bytes. An unset resource is 0.
func ContainerResource(c *v1.Container, sel *v1.ResourceFieldSelector) (string, error) {
	divisor := sel.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	var list v1.ResourceList
	var name v1.ResourceName
	switch sel.Resource {
	case "limits.cpu", "limits.memory", "limits.ephemeral-storage":
		list, name = c.Resources.Limits, v1.ResourceName(sel.Resource[len("limits."):])
	case "requests.cpu", "requests.memory", "requests.ephemeral-storage":
		list, name = c.Resources.Requests, v1.ResourceName(sel.Resource[len("requests."):])
	default:
		return "", fmt.Errorf("resourceFieldRef.resource %q is not supported", sel.Resource)
	}
	q := list[name]
	var n, d int64
	if name == v1.ResourceCPU {
		n, d = q.MilliValue(), divisor.MilliValue()
	} else {
		n, d = q.Value(), divisor.Value()
	}
	if d <= 0 {
		return "", fmt.Errorf("resourceFieldRef.divisor %s: must be positive", divisor.String())
	}
	return strconv.FormatInt(ceilDiv(n, d), 10), nil
}

// ceilDiv is n/d rounded towards positive infinity, d > 0.
func ceilDiv(n, d int64) int64 {
	q := n / d
	if n%d != 0 && n > 0 {
		q++
	}
	return q
}
