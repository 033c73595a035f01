package main

import (
	"fmt"
	"maps"
	"strings"
)

// The plugin adds two labels of its own to every container it makes: its
// sandbox, so that ContainerStatus (which CRI answers without the sandbox)
// needs no second call, and its pod's UID, so that `crictl ps --label`
// finds a pod's containers. A sandbox needs none but with a pod cgroup
// (labelPodCgroupQOS): its CRI metadata holds the pod's name, namespace,
// UID and attempt, and the host's labels name the rest. They are few on
// purpose: every label is listed, encoded and decoded on each resync and
// look-up (see watch_bench_test.go). They are stripped from everything the
// plugin returns, so the host's labels come back unchanged; the host may
// not use the prefix.
const (
	labelPrefix    = "runtime-containerd.podhost.io/"
	labelSandboxID = labelPrefix + "sandbox-id"
	labelPodUID    = labelPrefix + "pod-uid"
	// labelPodCgroupQOS is on a sandbox run with a pod cgroup: its pod's
	// QoS class, which with its pod UID names the cgroup (podcgroup.go).
	labelPodCgroupQOS = labelPrefix + "pod-cgroup-qos"
)

// checkLabels refuses host labels that use the plugin's prefix.
func checkLabels(labels map[string]string) error {
	for k := range labels {
		if strings.HasPrefix(k, labelPrefix) {
			return fmt.Errorf("%w: label %q uses the prefix %s, which runtime-containerd reserves", errInvalid, k, labelPrefix)
		}
	}
	return nil
}

// containerLabels returns the host's labels plus the plugin's for a
// container of the sandbox sandboxID; pod is the sandbox's spec, when the
// caller gave it.
func containerLabels(spec ContainerSpec, sandboxID string, pod *SandboxSpec) map[string]string {
	out := make(map[string]string, len(spec.Labels)+2)
	maps.Copy(out, spec.Labels)
	out[labelSandboxID] = sandboxID
	if pod != nil && pod.UID != "" {
		out[labelPodUID] = pod.UID
	}
	return out
}

// hostLabels returns labels without the plugin's own; nil stays nil.
func hostLabels(labels map[string]string) map[string]string {
	if labels == nil {
		return nil
	}
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if !strings.HasPrefix(k, labelPrefix) {
			out[k] = v
		}
	}
	return out
}
