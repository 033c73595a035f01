package conformance

import (
	"errors"
	"regexp"
	"strings"
)

// FastSpecs is the fixed subset of node conformance specs meant for
// `make test` once the binaries are cached (issue 26, item 2): specs that
// pass against podhost and take seconds each. An entry is a spec's full
// text as ginkgo's focus sees it, or enough of it to name one spec (no
// "[It] " and no label list); only specs a recorded run saw pass belong
// here (CONFORMANCE.md).
var FastSpecs = []string{
	// Passed in the partial run of 2026-12-03 (CONFORMANCE.md), 4–10 s each.
	"[sig-node] InitContainer should invoke init containers on a RestartNever pod [Conformance] [NodeConformance]",
	"[sig-node] Kubelet when scheduling a busybox command in a pod should print the output to logs [Conformance] [NodeConformance]",
	"[sig-node] Pods should be submitted and removed [Conformance] [NodeConformance]",
	"[sig-node] Pods should get a host IP [Conformance] [NodeConformance]",
	"[sig-storage] ConfigMap should be consumable from pods in volume [Conformance] [NodeConformance]",
	"[sig-storage] EmptyDir volumes should support (root,0644,default) [LinuxOnly] [Conformance] [NodeConformance]",
	"[sig-storage] Secrets should be consumable from pods in volume [Conformance] [NodeConformance]",
	// Passed in the partial runs of 2026-12-03 and 2026-12-04: hooks,
	// probes, init containers, restart rules, security context, sysctls,
	// subPath, and exec (the ephemeral container and /etc/hosts specs
	// check through exec), 2–36 s each.
	"[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart exec hook properly [Conformance] [NodeConformance]",
	"[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute prestop exec hook properly [Conformance] [NodeConformance]",
	"[sig-node] InitContainer should not start app containers and fail the pod if init containers fail on a RestartNever pod [Conformance] [NodeConformance]",
	"[sig-node] Probing container should be ready immediately after startupProbe succeeds [NodeConformance]",
	"Container Restart Rules should restart container on rule match [Beta] [NodeConformance]",
	"[sig-node] Security Context When creating a container with runAsNonRoot should not run with an explicit root user ID [LinuxOnly] [NodeConformance]",
	"[sig-node] Sysctls [LinuxOnly] should support sysctls with slashes as separator [Environment:NotInUserNS] [NodeConformance]",
	"[sig-storage] HostPath should support subPath [NodeConformance]",
	"[sig-node] Ephemeral Containers will start an ephemeral container in an existing pod [Conformance] [NodeConformance]",
	"[sig-node] KubeletManagedEtcHosts should test kubelet managed /etc/hosts file [Conformance] [NodeConformance]",
}

// FastFocus is the focus that selects exactly FastSpecs.
func FastFocus() (string, error) {
	if len(FastSpecs) == 0 {
		return "", errors.New("no fast specs are listed yet (test/conformance/fast.go)")
	}
	quoted := make([]string, len(FastSpecs))
	for i, s := range FastSpecs {
		quoted[i] = regexp.QuoteMeta(s)
	}
	return strings.Join(quoted, "|"), nil
}
