package podvalidate

import (
	"path"
	"regexp"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// capabilities are the Linux capabilities a container may add or drop,
// by the names CRI takes (without CAP_), and ALL.
var capabilities = sets.New("ALL",
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
	"LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
	"SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
	"SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
	"MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF",
	"CHECKPOINT_RESTORE")

// sysctlName is a sysctl name with "." or "/" separators.
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// maxSysctlName is the longest sysctl name accepted.
const maxSysctlName = 253

var seccompTypes = []string{string(v1.SeccompProfileTypeRuntimeDefault), string(v1.SeccompProfileTypeUnconfined), string(v1.SeccompProfileTypeLocalhost)}

// validateSecurity checks the values of the pod's and the containers'
// securityContext that podhost passes to the runtime: ids in range, known
// capabilities, a seccomp profile it can name, sysctl names. Whether a
// sysctl is allowed and a Localhost profile exists depend on the node:
// host/admission checks them.
func validateSecurity(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ps := spec.SecurityContext; ps != nil {
		p := path.Child("securityContext")
		allErrs = append(allErrs, ids(ps.RunAsUser, ps.RunAsGroup, p)...)
		for i, g := range ps.SupplementalGroups {
			for _, msg := range validation.IsValidGroupID(g) {
				allErrs = append(allErrs, field.Invalid(p.Child("supplementalGroups").Index(i), g, msg))
			}
		}
		allErrs = append(allErrs, validateSeccomp(ps.SeccompProfile, p.Child("seccompProfile"))...)
		names := sets.New[string]()
		for i, s := range ps.Sysctls {
			sp := p.Child("sysctls").Index(i).Child("name")
			switch {
			case len(s.Name) > maxSysctlName || !sysctlName.MatchString(s.Name):
				allErrs = append(allErrs, field.Invalid(sp, s.Name, "must be a sysctl name such as net.ipv4.ping_group_range"))
			case names.Has(SysctlDotted(s.Name)):
				allErrs = append(allErrs, field.Duplicate(sp, s.Name))
			}
			names.Insert(SysctlDotted(s.Name))
		}
	}
	for i := range spec.InitContainers {
		allErrs = append(allErrs, validateContainerSecurity(spec.InitContainers[i].SecurityContext, path.Child("initContainers").Index(i).Child("securityContext"))...)
	}
	for i := range spec.Containers {
		allErrs = append(allErrs, validateContainerSecurity(spec.Containers[i].SecurityContext, path.Child("containers").Index(i).Child("securityContext"))...)
	}
	for i := range spec.EphemeralContainers {
		allErrs = append(allErrs, validateContainerSecurity(spec.EphemeralContainers[i].SecurityContext, path.Child("ephemeralContainers").Index(i).Child("securityContext"))...)
	}
	return allErrs
}

func ids(user, group *int64, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if user != nil {
		for _, msg := range validation.IsValidUserID(*user) {
			allErrs = append(allErrs, field.Invalid(path.Child("runAsUser"), *user, msg))
		}
	}
	if group != nil {
		for _, msg := range validation.IsValidGroupID(*group) {
			allErrs = append(allErrs, field.Invalid(path.Child("runAsGroup"), *group, msg))
		}
	}
	return allErrs
}

func validateContainerSecurity(sc *v1.SecurityContext, path *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	allErrs := ids(sc.RunAsUser, sc.RunAsGroup, path)
	allErrs = append(allErrs, validateSeccomp(sc.SeccompProfile, path.Child("seccompProfile"))...)
	sysAdmin := false
	if caps := sc.Capabilities; caps != nil {
		for _, list := range []struct {
			name string
			caps []v1.Capability
		}{{"add", caps.Add}, {"drop", caps.Drop}} {
			for i, c := range list.caps {
				cp := path.Child("capabilities", list.name).Index(i)
				name := strings.ToUpper(string(c))
				switch {
				case strings.HasPrefix(name, "CAP_") && capabilities.Has(strings.TrimPrefix(name, "CAP_")):
					allErrs = append(allErrs, field.Invalid(cp, c, "capabilities are named without the CAP_ prefix: "+strings.TrimPrefix(name, "CAP_")))
				case !capabilities.Has(name):
					allErrs = append(allErrs, field.Invalid(cp, c, "not a Linux capability (names are without CAP_, or ALL)"))
				case list.name == "add" && (name == "SYS_ADMIN" || name == "ALL"):
					sysAdmin = true
				}
			}
		}
	}
	if ape := sc.AllowPrivilegeEscalation; ape != nil && !*ape {
		ap := path.Child("allowPrivilegeEscalation")
		if sc.Privileged != nil && *sc.Privileged {
			allErrs = append(allErrs, field.Invalid(ap, false, "cannot be false with privileged true"))
		}
		if sysAdmin {
			allErrs = append(allErrs, field.Invalid(ap, false, "cannot be false with the capability SYS_ADMIN added"))
		}
	}
	return allErrs
}

// validateSeccomp checks a profile's type and that a Localhost profile
// names a relative path inside the node's profile directory.
func validateSeccomp(p *v1.SeccompProfile, fp *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	lp := fp.Child("localhostProfile")
	switch p.Type {
	case v1.SeccompProfileTypeLocalhost:
		switch {
		case p.LocalhostProfile == nil || *p.LocalhostProfile == "":
			return field.ErrorList{field.Required(lp, "a Localhost profile names its file")}
		case path.IsAbs(*p.LocalhostProfile) || strings.HasPrefix(path.Clean(*p.LocalhostProfile), ".."):
			return field.ErrorList{field.Invalid(lp, *p.LocalhostProfile, "must be a relative path inside the node's seccomp profile directory, without ..")}
		}
	case v1.SeccompProfileTypeRuntimeDefault, v1.SeccompProfileTypeUnconfined:
		if p.LocalhostProfile != nil {
			return field.ErrorList{field.Forbidden(lp, "only with type Localhost")}
		}
	default:
		return field.ErrorList{field.NotSupported(fp.Child("type"), p.Type, seccompTypes)}
	}
	return nil
}

// SysctlDotted writes a sysctl name with "." separators: a name whose
// first separator is "/" uses "/" between parts and may hold "." inside
// one (net/ipv4/conf/eth0.100/forwarding), so the two swap.
func SysctlDotted(name string) string {
	i := strings.IndexAny(name, "./")
	if i < 0 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
}
