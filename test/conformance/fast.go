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
