package podvalidate

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateVolume checks a statically defined PersistentVolume's identity.
func ValidateVolume(pv *v1.PersistentVolume) field.ErrorList {
	return dnsName(pv.Name, field.NewPath("metadata", "name"), validation.IsDNS1123Subdomain)
}

// ValidateClaim checks a statically bound PersistentVolumeClaim's identity.
func ValidateClaim(pvc *v1.PersistentVolumeClaim) field.ErrorList {
	allErrs := validateObjectMeta(&pvc.ObjectMeta, field.NewPath("metadata"))
	if pvc.Spec.VolumeName == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("spec", "volumeName"), "a static claim names its volume"))
	}
	return allErrs
}
