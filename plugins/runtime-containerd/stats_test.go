package main

import (
	"maps"
	"testing"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The plugin's own labels (a sandbox's pod cgroup QoS, a container's
// sandbox and pod UID) are not in the stats the host gets.
func TestStatsCarryTheHostsLabelsOnly(t *testing.T) {
	host := map[string]string{"app": "web"}
	withOwn := func(own string) map[string]string {
		out := maps.Clone(host)
		out[own] = "x"
		return out
	}
	sb := sandboxStatsToProto(&criapi.PodSandboxStats{Attributes: &criapi.PodSandboxAttributes{Id: "s", Labels: withOwn(labelPodCgroupQOS)}}, 0)
	c := containerStatsToProto(&criapi.ContainerStats{Attributes: &criapi.ContainerAttributes{Id: "c", Labels: withOwn(labelSandboxID)}}, "s", 0)
	if !maps.Equal(sb.GetLabels(), host) || !maps.Equal(c.GetLabels(), host) {
		t.Errorf("labels of sandbox stats %v, container stats %v; want %v", sb.GetLabels(), c.GetLabels(), host)
	}
}
