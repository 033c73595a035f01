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
	// mapped to cgroups. An ephemeral-storage limit is not enforced
	// without eviction.
	limitNames = sets.New(v1.ResourceCPU, v1.ResourceMemory)
	// requestNames are those a request may name: also ephemeral-storage,
	// which admission counts.
	requestNames = sets.New(v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage)
)

// validatePartial refuses hostPorts without the node's network (nothing
// maps ports), resources other than those podhost limits or counts, and
// an emptyDir sizeLimit on disk (not enforced without eviction).
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
	for i, vol := range spec.Volumes {
		if e := vol.EmptyDir; e != nil && e.SizeLimit != nil && e.SizeLimit.Sign() > 0 && e.Medium != v1.StorageMediumMemory {
			allErrs = append(allErrs, field.Forbidden(path.Child("volumes").Index(i).Child("emptyDir", "sizeLimit"),
				"not supported by podhost on disk: the limit is not enforced (no eviction); it sizes only a Memory emptyDir"))
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
