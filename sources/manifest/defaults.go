package manifest

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// defaultPod fills in what the API server would default for a pod.
func defaultPod(pod *v1.Pod) {
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	s := &pod.Spec
	if s.RestartPolicy == "" {
		s.RestartPolicy = v1.RestartPolicyAlways
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = v1.DNSClusterFirst
	}
	if s.TerminationGracePeriodSeconds == nil {
		g := int64(v1.DefaultTerminationGracePeriodSeconds)
		s.TerminationGracePeriodSeconds = &g
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &v1.PodSecurityContext{}
	}
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i])
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i])
	}
	for i := range s.Volumes {
		vol := &s.Volumes[i]
		if noVolumeSource(&vol.VolumeSource) {
			vol.EmptyDir = &v1.EmptyDirVolumeSource{}
		}
	}
}

func defaultContainer(c *v1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = v1.ProtocolTCP
		}
	}
}

// pullPolicy is Always for an image without a tag or tagged latest, and
// IfNotPresent otherwise (a digest counts as a fixed tag).
func pullPolicy(image string) v1.PullPolicy {
	if strings.Contains(image, "@") {
		return v1.PullIfNotPresent
	}
	last := image[strings.LastIndex(image, "/")+1:]
	_, tag, ok := strings.Cut(last, ":")
	if !ok || tag == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

// noVolumeSource reports whether no source is set; such a volume is an
// emptyDir, as the API server defaults it.
func noVolumeSource(src *v1.VolumeSource) bool {
	j, _ := json.Marshal(src) // typed API objects always marshal
	return string(j) == "{}"
}

func defaultVolume(pv *v1.PersistentVolume) {
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		m := v1.PersistentVolumeFilesystem
		pv.Spec.VolumeMode = &m
	}
}

func defaultClaim(pvc *v1.PersistentVolumeClaim) {
	if pvc.Namespace == "" {
		pvc.Namespace = "default"
	}
	if pvc.Spec.VolumeMode == nil {
		m := v1.PersistentVolumeFilesystem
		pvc.Spec.VolumeMode = &m
	}
}

// defaultSecret does what the API server does to a Secret it stores:
// stringData's keys are written into data (replacing theirs) and
// stringData is dropped; the type is Opaque when unset.
func defaultSecret(s *v1.Secret) {
	if s.Namespace == "" {
		s.Namespace = "default"
	}
	if s.Type == "" {
		s.Type = v1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = make(map[string][]byte, len(s.StringData))
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

// quantityKeys hold maps of resource quantities; sizeLimit holds one.
var quantityKeys = map[string]bool{"limits": true, "requests": true, "capacity": true, "overhead": true}

// badQuantity finds the first resource quantity in the JSON document that
// does not parse and returns its field path, or "". The typed decoder's
// error for a bad quantity does not say where it is.
func badQuantity(j []byte) string {
	var doc any
	if json.Unmarshal(j, &doc) != nil {
		return ""
	}
	return findBadQuantity(doc, "", false)
}

func findBadQuantity(node any, path string, quantities bool) string {
	switch n := node.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(n)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if quantities {
				p = path + "[" + k + "]"
				if !parses(n[k]) {
					return p
				}
				continue
			}
			if k == "sizeLimit" && !parses(n[k]) {
				return p
			}
			if bad := findBadQuantity(n[k], p, quantityKeys[k]); bad != "" {
				return bad
			}
		}
	case []any:
		for i, v := range n {
			if bad := findBadQuantity(v, path+"["+strconv.Itoa(i)+"]", false); bad != "" {
				return bad
			}
		}
	}
	return ""
}

func parses(v any) bool {
	switch q := v.(type) {
	case string:
		_, err := resource.ParseQuantity(q)
		return err == nil
	case float64, nil:
		return true
	}
	return false
}
