package podvalidate

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The values of honoured fields that podhost does not honour (see the
// notes of Rules): each is refused naming the field.

var (
	// limitNames are the resources a container limit may name: those
	// mapped to cgroups, and ephemeral-storage, which eviction enforces.
	limitNames = sets.New(v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage)
	// requestNames are those a request may name: also ephemeral-storage,
	// which admission counts.
	requestNames = sets.New(v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage)
)

// validatePartial refuses hostPorts without the node's network (nothing
// maps ports) and resources other than those podhost limits or counts.
func validatePartial(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	check := func(c *v1.Container, p *field.Path) {
		for i, port := range c.Ports {
			if port.HostPort != 0 && !spec.HostNetwork {
				allErrs = append(allErrs, field.Forbidden(p.Child("ports").Index(i).Child("hostPort"),
					"not supported by podhost without hostNetwork: no port mapping is made"))
			}
		}
		allErrs = append(allErrs, resourceNames(c.Resources.Limits, limitNames, p.Child("resources", "limits"))...)
		allErrs = append(allErrs, resourceNames(c.Resources.Requests, requestNames, p.Child("resources", "requests"))...)
	}
	for i := range spec.InitContainers {
		check(&spec.InitContainers[i], path.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		check(&spec.Containers[i], path.Child("containers").Index(i))
	}
	return allErrs
}

// ValidateStaticPod returns the rules a static pod (one of the manifest
// directory) breaks besides ValidatePod's: it may not have local storage
// limits, since the kubelet never evicts a static pod and an
// ephemeral-storage limit or an emptyDir sizeLimit on disk could not be
// enforced on it.
func ValidateStaticPod(pod *v1.Pod) field.ErrorList {
	const why = "not enforced on a static pod: a static pod is critical and never evicted, as the kubelet's"
	var allErrs field.ErrorList
	path := field.NewPath("spec")
	check := func(c *v1.Container, p *field.Path) {
		if _, ok := c.Resources.Limits[v1.ResourceEphemeralStorage]; ok {
			allErrs = append(allErrs, field.Forbidden(p.Child("resources", "limits").Key(string(v1.ResourceEphemeralStorage)), why))
		}
	}
	for i := range pod.Spec.InitContainers {
		check(&pod.Spec.InitContainers[i], path.Child("initContainers").Index(i))
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i], path.Child("containers").Index(i))
	}
	for i, vol := range pod.Spec.Volumes {
		if e := vol.EmptyDir; e != nil && e.SizeLimit != nil && e.SizeLimit.Sign() > 0 && e.Medium == v1.StorageMediumDefault {
			allErrs = append(allErrs, field.Forbidden(path.Child("volumes").Index(i).Child("emptyDir", "sizeLimit"), why+"; it sizes only a Memory emptyDir"))
		}
	}
	return allErrs
}

func resourceNames(l v1.ResourceList, allowed sets.Set[v1.ResourceName], path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for name := range l {
		if !allowed.Has(name) && len(validation.IsQualifiedName(string(name))) == 0 {
			allErrs = append(allErrs, field.NotSupported(path.Key(string(name)), name, sets.List(allowed)))
		}
	}
	return sortErrors(allErrs)
}
