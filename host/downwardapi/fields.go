package downwardapi

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Subscript splits metadata.labels['k'] or metadata.annotations['k'] into
// the map's path and the key; ok is false for any other path.
func Subscript(path string) (mapPath, key string, ok bool) {
	for _, p := range []string{"metadata.labels", "metadata.annotations"} {
		if rest, found := strings.CutPrefix(path, p+"['"); found {
			if key, found = strings.CutSuffix(rest, "']"); found && key != "" {
				return p, key, true
			}
		}
	}
	return "", "", false
}

// VolumeField is the value of a downwardAPI volume item's fieldRef path.
func VolumeField(pod *v1.Pod, path string) (string, error) {
	if v, ok := metadataField(pod, path); ok {
		return v, nil
	}
	if path == "metadata.labels" || path == "metadata.annotations" {
		return FormatMap(metaMap(pod, path)), nil
	}
	return "", fmt.Errorf("fieldRef.fieldPath %q is not supported in a volume", path)
}

// metadataField is the value of the paths both volumes and env resolve:
// the pod's name, namespace, UID, or one label or annotation.
func metadataField(pod *v1.Pod, path string) (string, bool) {
	if m, key, ok := Subscript(path); ok {
		return metaMap(pod, m)[key], true
	}
	switch path {
	case "metadata.name":
		return pod.Name, true
	case "metadata.namespace":
		return pod.Namespace, true
	case "metadata.uid":
		return string(pod.UID), true
	}
	return "", false
}

// Addresses are the IPs an env fieldRef may name, primary first.
type Addresses struct {
	PodIPs, HostIPs []string
}

// EnvField is the value of an env variable's fieldRef path. A pod on the
// host's network has the host's IPs as its own when the runtime reported
// none, as under the kubelet.
func EnvField(pod *v1.Pod, path string, a Addresses) (string, error) {
	if v, ok := metadataField(pod, path); ok {
		return v, nil
	}
	podIPs := a.PodIPs
	if len(podIPs) == 0 && pod.Spec.HostNetwork {
		podIPs = a.HostIPs
	}
	switch path {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return first(a.HostIPs), nil
	case "status.hostIPs":
		return strings.Join(a.HostIPs, ","), nil
	case "status.podIP":
		return first(podIPs), nil
	case "status.podIPs":
		return strings.Join(podIPs, ","), nil
	}
	return "", fmt.Errorf("fieldRef.fieldPath %q is not supported in env", path)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func metaMap(pod *v1.Pod, path string) map[string]string {
	if path == "metadata.labels" {
		return pod.Labels
	}
	return pod.Annotations
}

// FormatMap renders labels or annotations as the kubelet does: one
// key="value" a line (the value quoted as Go quotes it), sorted by key,
// with no newline after the last.
func FormatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(m[k]))
	}
	return b.String()
}
