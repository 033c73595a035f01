package conformance

import (
	"regexp"
	"strings"
)

// NotApplicable is a spec that cannot pass on this kind of machine,
// whatever the node does: it needs what the machine lacks (a registry, a
// second node, an image that is not built here).
type NotApplicable struct {
	// Spec is a regular expression for the spec's full text, as ginkgo's
	// --skip takes it.
	Spec string
	// Reason says what the spec needs that is not here.
	Reason string
}

// BaseSkip leaves out what the node conformance run never includes.
const BaseSkip = `\[Serial\]|\[Disruptive\]|\[Flaky\]`

// DefaultFocus selects the node conformance specs.
const DefaultFocus = `\[NodeConformance\]`

// NotApplicableSpecs are the node conformance specs of k8s.io/kubernetes
// v1.37.2 that this machine cannot run. hack/conformance checks that each
// matches a spec of the suite, so that a renamed spec does not silently
// come back as a failure nor stay skipped under a stale name.
var NotApplicableSpecs = []NotApplicable{
	{
		Spec:   regexp.QuoteMeta("Pods should have their auto-restart back-off timer reset on image update"),
		Reason: "updates the image to nginx (registry.k8s.io/e2e-test-images/nginx), which is not built here",
	},
	{
		Spec:   regexp.QuoteMeta("PrivilegedPod should enable privileged commands"),
		Reason: "adds a dummy network link in a privileged container; this machine's kernel has no dummy link type (ip link add … type dummy: Unknown device type)",
	},
	{
		// The 20 specs (of the 60 in their group) that restart a Guaranteed
		// container and then read its oom_score_adj.
		Spec: regexp.QuoteMeta("[sig-node] PLR Pod InPlace Resize [FeatureGate:InPlacePodLevelResourcesVerticalScaling] PLR guaranteed qos - 1 container with resize policy [Environment:NotInUserNS] ") + `(` +
			regexp.QuoteMeta("cpu & mem restart + resize initContainers resizing cpu & mem in opposite directions [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart + resize initContainers resizing cpu & mem in the same direction [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart + resize initContainers resizing cpu [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart + resize initContainers resizing mem [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart + resize initContainers resizing only pod-level cpu [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart + resize initContainers resizing only pod-level mem [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart resizing cpu & mem in opposite directions [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart resizing cpu & mem in the same direction [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart resizing cpu [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart resizing mem [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart resizing only pod-level cpu [Beta]") + `|` +
			regexp.QuoteMeta("cpu & mem restart resizing only pod-level mem [Beta]") + `|` +
			regexp.QuoteMeta("cpu restart resizing cpu & mem in opposite directions [Beta]") + `|` +
			regexp.QuoteMeta("cpu restart resizing cpu & mem in the same direction [Beta]") + `|` +
			regexp.QuoteMeta("cpu restart resizing cpu [Beta]") + `|` +
			regexp.QuoteMeta("cpu restart resizing only pod-level cpu [Beta]") + `|` +
			regexp.QuoteMeta("mem restart resizing cpu & mem in opposite directions [Beta]") + `|` +
			regexp.QuoteMeta("mem restart resizing cpu & mem in the same direction [Beta]") + `|` +
			regexp.QuoteMeta("mem restart resizing mem [Beta]") + `|` +
			regexp.QuoteMeta("mem restart resizing only pod-level mem [Beta]") + `)`,
		Reason: "reads oom_score_adj -997 (the kubelet's for a Guaranteed container) in a restarted container; this machine's root lacks CAP_SYS_RESOURCE (CapEff 000001fffeffffff), so the kernel refuses any negative oom_score_adj (echo -997 > /proc/self/oom_score_adj: I/O error) and the container gets 0",
	},
}

// SkipPattern is the --skip expression of a run: skip, then each
// not-applicable spec.
func SkipPattern(skip string, na []NotApplicable) string {
	parts := []string{}
	if skip != "" {
		parts = append(parts, skip)
	}
	for _, n := range na {
		parts = append(parts, n.Spec)
	}
	return strings.Join(parts, "|")
}

// Classify returns, for each not-applicable entry, the names among specs
// that its pattern matches. An entry that matches none comes back with no
// names: the caller reports it as stale.
func Classify(specs []string, na []NotApplicable) (map[NotApplicable][]string, error) {
	out := map[NotApplicable][]string{}
	for _, n := range na {
		re, err := regexp.Compile(n.Spec)
		if err != nil {
			return nil, err
		}
		out[n] = nil
		for _, s := range specs {
			if re.MatchString(s) {
				out[n] = append(out[n], s)
			}
		}
	}
	return out, nil
}
