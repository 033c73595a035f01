package podvalidate

import (
	"path"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The downward API as the API server validates it, for pods that do not
// come from one: the paths a fieldRef may name, the resources a
// resourceFieldRef may name (hugepages limits are refused, so neither are
// their fields), and the divisors of each.
var (
	// volumeFieldPaths are those of a downwardAPI volume item, besides
	// one label or annotation.
	volumeFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations")
	// envFieldPaths are those of an env variable, besides one label or
	// annotation.
	envFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.uid",
		"spec.nodeName", "spec.serviceAccountName",
		"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
	fieldResources = sets.New("limits.cpu", "limits.memory", "limits.ephemeral-storage",
		"requests.cpu", "requests.memory", "requests.ephemeral-storage")
	cpuDivisors  = sets.New("1m", "1")
	sizeDivisors = sets.New("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
)

// labelOrAnnotation reports whether p is metadata.labels['k'] or
// metadata.annotations['k'] with a valid key.
func labelOrAnnotation(p string) bool {
	for _, prefix := range []string{"metadata.labels['", "metadata.annotations['"} {
		if key, ok := strings.CutPrefix(p, prefix); ok {
			key, ok = strings.CutSuffix(key, "']")
			if prefix == "metadata.annotations['" {
				key = strings.ToLower(key)
			}
			return ok && len(validation.IsQualifiedName(key)) == 0
		}
	}
	return false
}

// validateDownwardAPI checks the downward API's selectors in the pod's
// volumes and env, and the file paths and modes of every item of a
// downwardAPI, projected, configMap or secret volume.
func validateDownwardAPI(spec *v1.PodSpec, p *field.Path) field.ErrorList {
	containers := sets.New[string]()
	for _, list := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range list {
			containers.Insert(c.Name)
		}
	}
	var allErrs field.ErrorList
	for i := range spec.Volumes {
		allErrs = append(allErrs, validateVolumeFiles(&spec.Volumes[i].VolumeSource, containers, p.Child("volumes").Index(i))...)
	}
	env := func(list []v1.EnvVar, ep *field.Path) {
		for j, e := range list {
			if e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil {
				rp := ep.Index(j).Child("valueFrom", "resourceFieldRef")
				allErrs = append(allErrs, validateResourceSelector(e.ValueFrom.ResourceFieldRef, containers, false, rp)...)
			}
		}
	}
	for i, c := range spec.InitContainers {
		env(c.Env, p.Child("initContainers").Index(i).Child("env"))
	}
	for i, c := range spec.Containers {
		env(c.Env, p.Child("containers").Index(i).Child("env"))
	}
	for i, c := range spec.EphemeralContainers {
		env(c.Env, p.Child("ephemeralContainers").Index(i).Child("env"))
	}
	return allErrs
}

// validateVolumeFiles checks the items of a volume whose files podhost
// writes.
func validateVolumeFiles(src *v1.VolumeSource, containers sets.Set[string], p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	keys := func(items []v1.KeyToPath, ip *field.Path) {
		for i, it := range items {
			allErrs = append(allErrs, validateFilePath(it.Path, ip.Index(i).Child("path"))...)
			allErrs = append(allErrs, validateMode(it.Mode, ip.Index(i).Child("mode"))...)
			allErrs = append(allErrs, noFileUser(it.User, ip.Index(i).Child("user"))...)
		}
	}
	switch {
	case src.DownwardAPI != nil:
		dp := p.Child("downwardAPI")
		allErrs = append(allErrs, validateMode(src.DownwardAPI.DefaultMode, dp.Child("defaultMode"))...)
		allErrs = append(allErrs, validateDownwardItems(src.DownwardAPI.Items, containers, dp.Child("items"))...)
	case src.ConfigMap != nil:
		allErrs = append(allErrs, validateMode(src.ConfigMap.DefaultMode, p.Child("configMap", "defaultMode"))...)
		keys(src.ConfigMap.Items, p.Child("configMap", "items"))
	case src.Secret != nil:
		allErrs = append(allErrs, validateMode(src.Secret.DefaultMode, p.Child("secret", "defaultMode"))...)
		keys(src.Secret.Items, p.Child("secret", "items"))
	case src.Projected != nil:
		pp := p.Child("projected")
		allErrs = append(allErrs, validateMode(src.Projected.DefaultMode, pp.Child("defaultMode"))...)
		for i, s := range src.Projected.Sources {
			sp := pp.Child("sources").Index(i)
			switch {
			case s.DownwardAPI != nil:
				allErrs = append(allErrs, validateDownwardItems(s.DownwardAPI.Items, containers, sp.Child("downwardAPI", "items"))...)
			case s.ConfigMap != nil:
				keys(s.ConfigMap.Items, sp.Child("configMap", "items"))
			case s.Secret != nil:
				keys(s.Secret.Items, sp.Child("secret", "items"))
			case s.ServiceAccountToken != nil:
				allErrs = append(allErrs, validateFilePath(s.ServiceAccountToken.Path, sp.Child("serviceAccountToken", "path"))...)
				allErrs = append(allErrs, noFileUser(s.ServiceAccountToken.User, sp.Child("serviceAccountToken", "user"))...)
			}
		}
	}
	return allErrs
}

func validateDownwardItems(items []v1.DownwardAPIVolumeFile, containers sets.Set[string], p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, it := range items {
		ip := p.Index(i)
		allErrs = append(allErrs, validateFilePath(it.Path, ip.Child("path"))...)
		allErrs = append(allErrs, validateMode(it.Mode, ip.Child("mode"))...)
		switch {
		case it.FieldRef != nil && it.ResourceFieldRef != nil:
			allErrs = append(allErrs, field.Invalid(ip, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		case it.FieldRef != nil:
			allErrs = append(allErrs, validateFieldSelector(it.FieldRef, volumeFieldPaths, ip.Child("fieldRef"))...)
		case it.ResourceFieldRef != nil:
			allErrs = append(allErrs, validateResourceSelector(it.ResourceFieldRef, containers, true, ip.Child("resourceFieldRef"))...)
		default:
			allErrs = append(allErrs, field.Required(ip, "one of fieldRef and resourceFieldRef is required"))
		}
	}
	return allErrs
}

// validateFilePath refuses a file path that is empty, absolute, has a
// ".." element or starts with "..": the writer keeps names starting with
// ".." for itself, and the file must stay inside the volume.
func validateFilePath(p string, fp *field.Path) field.ErrorList {
	switch {
	case p == "":
		return field.ErrorList{field.Required(fp, "")}
	case path.IsAbs(p):
		return field.ErrorList{field.Invalid(fp, p, "must be a relative path")}
	case slices.Contains(strings.Split(p, "/"), ".."):
		return field.ErrorList{field.Invalid(fp, p, "must not contain '..'")}
	case strings.HasPrefix(p, ".."):
		return field.ErrorList{field.Invalid(fp, p, "must not start with '..'")}
	}
	return nil
}

// noFileUser refuses the owner of a file in an item whose type Rules
// takes as a whole (configMap, secret and token items): podhost sets no
// file ownership, as the defaultUser and user rules say.
func noFileUser(user *int64, p *field.Path) field.ErrorList {
	if user != nil {
		return field.ErrorList{field.Forbidden(p, "not supported by podhost: file ownership is not set")}
	}
	return nil
}

func validateMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode < 0 || *mode > 0o777) {
		return field.ErrorList{field.Invalid(p, *mode, "must be a number between 0 and 0777 (octal), both inclusive")}
	}
	return nil
}

func validateFieldSelector(s *v1.ObjectFieldSelector, paths sets.Set[string], p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s.APIVersion != "" && s.APIVersion != "v1" {
		allErrs = append(allErrs, field.NotSupported(p.Child("apiVersion"), s.APIVersion, []string{"v1"}))
	}
	if !paths.Has(s.FieldPath) && !labelOrAnnotation(s.FieldPath) {
		allErrs = append(allErrs, field.NotSupported(p.Child("fieldPath"), s.FieldPath, sets.List(paths)))
	}
	return allErrs
}

// validateResourceSelector checks a resourceFieldRef: a volume's must
// name its container, an env variable's may (its own by default).
func validateResourceSelector(s *v1.ResourceFieldSelector, containers sets.Set[string], volume bool, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case s.ContainerName == "" && volume:
		allErrs = append(allErrs, field.Required(p.Child("containerName"), ""))
	case s.ContainerName != "" && !containers.Has(s.ContainerName):
		allErrs = append(allErrs, field.NotFound(p.Child("containerName"), s.ContainerName))
	}
	if !fieldResources.Has(s.Resource) {
		return append(allErrs, field.NotSupported(p.Child("resource"), s.Resource, sets.List(fieldResources)))
	}
	if divisors := sizeDivisors; !s.Divisor.Equal(resource.Quantity{}) {
		if strings.HasSuffix(s.Resource, ".cpu") {
			divisors = cpuDivisors
		}
		if !divisors.Has(s.Divisor.String()) {
			allErrs = append(allErrs, field.NotSupported(p.Child("divisor"), s.Divisor.String(), sets.List(divisors)))
		}
	}
	return allErrs
}
