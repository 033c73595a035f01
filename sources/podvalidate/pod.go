package podvalidate

import (
	"net/netip"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ClaimLookup reports whether a PersistentVolumeClaim namespace/name is
// known to podhost.
type ClaimLookup func(namespace, name string) bool

var (
	restartPolicies = []string{string(v1.RestartPolicyAlways), string(v1.RestartPolicyOnFailure), string(v1.RestartPolicyNever)}
	dnsPolicies     = []string{string(v1.DNSClusterFirst), string(v1.DNSClusterFirstWithHostNet), string(v1.DNSDefault), string(v1.DNSNone)}
)

// ValidatePod returns every rule the pod breaks. With a nil claims lookup
// the persistentVolumeClaim references are not resolved; sources that see
// only part of the claims pass nil and the merger resolves them later with
// [ValidateClaimRefs].
func ValidatePod(pod *v1.Pod, claims ClaimLookup) field.ErrorList {
	return validatePod(pod, claims, false)
}

// ValidateAPIServerPod is ValidatePod for a pod of the API server: its
// claims are the API server's (not resolved here), and its projected
// volumes may have any source the node reads from the API server
// (serviceAccountToken). Pods of other sources may have projected volumes
// of downwardAPI, configMap and secret sources only: their ConfigMaps and
// Secrets are the sources' (resolved when the volume is set up and the
// container created, as the kubelet does), and a host without an API
// server has no tokens to give.
func ValidateAPIServerPod(pod *v1.Pod) field.ErrorList {
	return validatePod(pod, nil, true)
}

func validatePod(pod *v1.Pod, claims ClaimLookup, apiVolumes bool) field.ErrorList {
	if pod == nil {
		return field.ErrorList{field.Required(field.NewPath("pod"), "")}
	}
	allErrs := validateObjectMeta(&pod.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateSpec(&pod.Spec, field.NewPath("spec"), apiVolumes)...)
	if claims != nil {
		allErrs = append(allErrs, ValidateClaimRefs(pod, claims)...)
	}
	return allErrs
}

// ValidateClaimRefs checks that every persistentVolumeClaim volume of the
// pod names a claim known in the pod's namespace.
func ValidateClaimRefs(pod *v1.Pod, claims ClaimLookup) field.ErrorList {
	var allErrs field.ErrorList
	for i, vol := range pod.Spec.Volumes {
		pvc := vol.PersistentVolumeClaim
		if pvc == nil || pvc.ClaimName == "" {
			continue
		}
		if !claims(pod.Namespace, pvc.ClaimName) {
			p := field.NewPath("spec", "volumes").Index(i).Child("persistentVolumeClaim", "claimName")
			allErrs = append(allErrs, field.NotFound(p, pvc.ClaimName))
		}
	}
	return allErrs
}

func validateObjectMeta(meta *metav1.ObjectMeta, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, dnsName(meta.Name, path.Child("name"), validation.IsDNS1123Subdomain)...)
	allErrs = append(allErrs, dnsName(meta.Namespace, path.Child("namespace"), validation.IsDNS1123Label)...)
	return allErrs
}

// dnsName checks a required name with one of apimachinery's DNS validators.
func dnsName(name string, path *field.Path, check func(string) []string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var allErrs field.ErrorList
	for _, msg := range check(name) {
		allErrs = append(allErrs, field.Invalid(path, name, msg))
	}
	return allErrs
}

func validateSpec(spec *v1.PodSpec, path *field.Path, apiVolumes bool) field.ErrorList {
	var allErrs field.ErrorList
	volumes, errs := validateVolumes(spec.Volumes, path.Child("volumes"), apiVolumes)
	allErrs = append(allErrs, errs...)
	allErrs = append(allErrs, validateContainers(spec, volumes, path)...)
	if len(spec.EphemeralContainers) > 0 && !apiVolumes {
		allErrs = append(allErrs, field.Forbidden(path.Child("ephemeralContainers"),
			"ephemeral containers come through the API server's ephemeralcontainers subresource; a pod of another source cannot have them"))
	}

	switch spec.RestartPolicy {
	case "":
		allErrs = append(allErrs, field.Required(path.Child("restartPolicy"), ""))
	case v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever:
	default:
		allErrs = append(allErrs, field.NotSupported(path.Child("restartPolicy"), spec.RestartPolicy, restartPolicies))
	}
	switch spec.DNSPolicy {
	case "", v1.DNSClusterFirst, v1.DNSClusterFirstWithHostNet, v1.DNSDefault, v1.DNSNone:
	default:
		allErrs = append(allErrs, field.NotSupported(path.Child("dnsPolicy"), spec.DNSPolicy, dnsPolicies))
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		allErrs = append(allErrs, field.Invalid(path.Child("activeDeadlineSeconds"), *d, "must be greater than 0"))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		allErrs = append(allErrs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	allErrs = append(allErrs, validateHosts(spec, path)...)
	allErrs = append(allErrs, validateDownwardAPI(spec, path)...)
	allErrs = append(allErrs, validatePartial(spec, path)...)
	allErrs = append(allErrs, validateSecurity(spec, path)...)
	return append(allErrs, refusedFields(spec, path)...)
}

// validateHosts checks what goes into the pod's /etc/hosts: the subdomain
// is a DNS label, the hostnameOverride a DNS subdomain of at most 64
// characters (as the API server checks it: not with hostNetwork nor
// setHostnameAsFQDN), each host alias an IP address with DNS names (a line
// of the file each; nothing else may reach it).
func validateHosts(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Subdomain != "" {
		allErrs = append(allErrs, dnsName(spec.Subdomain, path.Child("subdomain"), validation.IsDNS1123Label)...)
	}
	if o := spec.HostnameOverride; o != nil {
		p := path.Child("hostnameOverride")
		if spec.SetHostnameAsFQDN != nil && *spec.SetHostnameAsFQDN {
			allErrs = append(allErrs, field.Forbidden(p, "may not be specified when setHostnameAsFQDN is true"))
		}
		if spec.HostNetwork {
			allErrs = append(allErrs, field.Forbidden(p, "may not be specified when hostNetwork is true"))
		}
		if len(*o) > 64 {
			allErrs = append(allErrs, field.TooLong(p, "", 64))
		}
		allErrs = append(allErrs, dnsName(*o, p, validation.IsDNS1123Subdomain)...)
	}
	for i, a := range spec.HostAliases {
		p := path.Child("hostAliases").Index(i)
		if _, err := netip.ParseAddr(a.IP); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("ip"), a.IP, "must be a valid IP address"))
		}
		if len(a.Hostnames) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("hostnames"), ""))
		}
		for j, h := range a.Hostnames {
			allErrs = append(allErrs, dnsName(h, p.Child("hostnames").Index(j), validation.IsDNS1123Subdomain)...)
		}
	}
	return allErrs
}
