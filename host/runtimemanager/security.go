package runtimemanager

import (
	"fmt"
	"path/filepath"
	"slices"

	v1 "k8s.io/api/core/v1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sources/podvalidate"
)

// effectiveSecurity is the container's securityContext with the pod's
// filled in where the container sets nothing, as the kubelet merges them:
// the user, group, runAsNonRoot and seccomp profile fall back to the
// pod's; capabilities, privileged, readOnlyRootFilesystem,
// allowPrivilegeEscalation and procMount are the container's alone.
func effectiveSecurity(pod *v1.Pod, c *v1.Container) *v1.SecurityContext {
	sc := &v1.SecurityContext{}
	if c.SecurityContext != nil {
		sc = c.SecurityContext.DeepCopy()
	}
	ps := pod.Spec.SecurityContext
	if ps == nil {
		return sc
	}
	if sc.RunAsUser == nil {
		sc.RunAsUser = ps.RunAsUser
	}
	if sc.RunAsGroup == nil {
		sc.RunAsGroup = ps.RunAsGroup
	}
	if sc.RunAsNonRoot == nil {
		sc.RunAsNonRoot = ps.RunAsNonRoot
	}
	if sc.SeccompProfile == nil {
		sc.SeccompProfile = ps.SeccompProfile
	}
	return sc
}

// seccomp maps a seccomp profile; nil (set nowhere) is Unconfined, the
// kubelet's default without its SeccompDefault option. A Localhost
// profile is a file under root.
func seccomp(p *v1.SeccompProfile, root string) *runtimev1.SecurityProfile {
	if p == nil {
		return &runtimev1.SecurityProfile{ProfileType: runtimev1.SecurityProfile_PROFILE_TYPE_UNCONFINED}
	}
	switch p.Type {
	case v1.SeccompProfileTypeRuntimeDefault:
		return &runtimev1.SecurityProfile{ProfileType: runtimev1.SecurityProfile_PROFILE_TYPE_RUNTIME_DEFAULT}
	case v1.SeccompProfileTypeLocalhost:
		ref := ""
		if p.LocalhostProfile != nil {
			ref = filepath.Join(root, *p.LocalhostProfile)
		}
		return &runtimev1.SecurityProfile{ProfileType: runtimev1.SecurityProfile_PROFILE_TYPE_LOCALHOST, LocalhostRef: ref}
	}
	return &runtimev1.SecurityProfile{ProfileType: runtimev1.SecurityProfile_PROFILE_TYPE_UNCONFINED}
}

// containerSecurity is the contract's security of container c.
func (m *Manager) containerSecurity(pod *v1.Pod, c *v1.Container) *runtimev1.SecurityContext {
	sc := effectiveSecurity(pod, c)
	out := &runtimev1.SecurityContext{
		RunAsUser:      sc.RunAsUser,
		RunAsGroup:     sc.RunAsGroup,
		Privileged:     sc.Privileged != nil && *sc.Privileged,
		ReadonlyRootfs: sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
		NoNewPrivs:     sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
		Seccomp:        seccomp(sc.SeccompProfile, m.opts.SeccompProfileRoot),
	}
	out.SupplementalGroups = podGroups(pod)
	if caps := sc.Capabilities; caps != nil {
		for _, c := range caps.Add {
			out.AddCapabilities = append(out.AddCapabilities, string(c))
		}
		for _, c := range caps.Drop {
			out.DropCapabilities = append(out.DropCapabilities, string(c))
		}
	}
	return out
}

// sandboxSecurity is the contract's security of the pod's sandbox: the
// pod's user, groups and seccomp profile, and privileged when a container
// is (the runtime refuses a privileged container in an unprivileged
// sandbox).
func (m *Manager) sandboxSecurity(pod *v1.Pod) *runtimev1.SecurityContext {
	out := &runtimev1.SecurityContext{}
	var profile *v1.SeccompProfile
	if ps := pod.Spec.SecurityContext; ps != nil {
		out.RunAsUser, out.RunAsGroup = ps.RunAsUser, ps.RunAsGroup
		out.SupplementalGroups = podGroups(pod)
		profile = ps.SeccompProfile
	}
	out.Seccomp = seccomp(profile, m.opts.SeccompProfileRoot)
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			out.Privileged = true
		}
	}
	return out
}

// podGroups are the supplemental groups of the pod's processes, as the
// kubelet gives them to the sandbox and to every container: the fsGroup
// first, then supplementalGroups.
func podGroups(pod *v1.Pod) []int64 {
	ps := pod.Spec.SecurityContext
	if ps == nil {
		return nil
	}
	var out []int64
	if ps.FSGroup != nil {
		out = append(out, *ps.FSGroup)
	}
	return append(out, ps.SupplementalGroups...)
}

// sandboxSysctls are the pod's sysctls, names written with "."
// separators (podvalidate.SysctlDotted).
func sandboxSysctls(pod *v1.Pod) map[string]string {
	ps := pod.Spec.SecurityContext
	if ps == nil || len(ps.Sysctls) == 0 {
		return nil
	}
	out := make(map[string]string, len(ps.Sysctls))
	for _, s := range ps.Sysctls {
		out[podvalidate.SysctlDotted(s.Name)] = s.Value
	}
	return out
}

// needsImageUser reports whether the container's user must be read from
// its image: to verify runAsNonRoot, or to give a runAsGroup a user.
func needsImageUser(pod *v1.Pod, c *v1.Container) bool {
	sc := effectiveSecurity(pod, c)
	return sc.RunAsUser == nil && (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot || sc.RunAsGroup != nil)
}

// verifyNonRoot checks runAsNonRoot before the container is created, as
// the kubelet does: an explicit uid 0 breaks it, and without an explicit
// uid so does an image that runs as root (names no user, or uid 0) or
// names a user by a name, which cannot be verified. img is the image's
// user (ImageStatus); nil when not read.
func verifyNonRoot(pod *v1.Pod, c *v1.Container, img *runtimev1.Image) error {
	sc := effectiveSecurity(pod, c)
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		return nil
	}
	if img == nil {
		img = &runtimev1.Image{} // not read: taken to run as root
	}
	who := fmt.Sprintf("(pod: %q, container: %s)", fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID), c.Name)
	if sc.RunAsUser != nil {
		if *sc.RunAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy %s", who)
		}
		return nil
	}
	switch {
	case img.Uid != nil && *img.Uid == 0, img.Uid == nil && img.GetUsername() == "":
		return fmt.Errorf("container has runAsNonRoot and image will run as root %s", who)
	case img.Uid == nil:
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root %s",
			img.GetUsername(), who)
	}
	return nil
}

// imageUser gives a container that sets a group but no user the image's
// user, as the runtime takes no group without a user: its uid, its user
// name, or root when the image names none.
func imageUser(sc *runtimev1.SecurityContext, img *runtimev1.Image) {
	if sc.RunAsUser != nil || sc.RunAsGroup == nil || img == nil {
		return
	}
	switch {
	case img.Uid != nil:
		uid := img.GetUid()
		sc.RunAsUser = &uid
	case img.GetUsername() != "":
		sc.RunAsUsername = img.GetUsername()
	default:
		var root int64
		sc.RunAsUser = &root
	}
}
