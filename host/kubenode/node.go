package kubenode

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// observed is what one status round measured: everything the agent owns
// on its Node.
type observed struct {
	labels                map[string]string
	addresses             []v1.NodeAddress
	daemonPort            int32
	declaredFeatures      []string
	capacity, allocatable v1.ResourceList
	info                  v1.NodeSystemInfo
	health                Health
	// volumesInUse is status.volumesInUse when volumesKnown; else the
	// Node's list is kept.
	volumesInUse []v1.UniqueVolumeName
	volumesKnown bool
}

// applyNode returns a copy of base with the agent's fields set from o at
// now: its labels, addresses, daemon endpoint, capacity and allocatable
// (the resources it measures; others, such as extended resources an admin
// advertised, are kept), node info, conditions and, when known, the
// volumes in use. The spec, annotations and other labels are base's.
func applyNode(base *v1.Node, o observed, now time.Time) *v1.Node {
	n := base.DeepCopy()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	maps.Copy(n.Labels, o.labels)
	s := &n.Status
	s.Addresses = slices.Clone(o.addresses)
	s.DaemonEndpoints.KubeletEndpoint.Port = o.daemonPort
	s.DeclaredFeatures = slices.Sorted(slices.Values(o.declaredFeatures))
	s.Capacity = mergeResources(s.Capacity, o.capacity)
	s.Allocatable = mergeResources(s.Allocatable, o.allocatable)
	s.NodeInfo = o.info
	s.Conditions = setConditions(s.Conditions, wantConditions(o.health, o.capacity), metav1.NewTime(now))
	if o.volumesKnown {
		s.VolumesInUse = nil
		if len(o.volumesInUse) > 0 {
			s.VolumesInUse = slices.Clone(o.volumesInUse)
		}
	}
	return n
}

func mergeResources(have, set v1.ResourceList) v1.ResourceList {
	out := have.DeepCopy()
	if out == nil {
		out = v1.ResourceList{}
	}
	for k, q := range set {
		out[k] = q.DeepCopy()
	}
	return out
}

// nodeChanged reports whether want differs from have in what the agent
// owns beyond heartbeat times.
func nodeChanged(have, want *v1.Node) bool {
	for k, v := range want.Labels {
		if have.Labels[k] != v {
			return true
		}
	}
	return statusChanged(&have.Status, &want.Status)
}

// statusPatch is the strategic merge patch from orig, as read, to want,
// for the status subresource: labels and status, never the spec. It
// carries orig's resourceVersion, so the API server refuses it with a
// conflict if the Node changed since it was read. Addresses are replaced
// whole: their merge key (type) is not unique, so a merge would mix old
// and new.
func statusPatch(orig, want *v1.Node) ([]byte, error) {
	oldData, err := json.Marshal(orig)
	if err != nil {
		return nil, fmt.Errorf("encoding node %s: %w", orig.Name, err)
	}
	diff := want.DeepCopy()
	diff.Spec = orig.Spec
	replaceAddresses := !apiequality.Semantic.DeepEqual(orig.Status.Addresses, want.Status.Addresses)
	diff.Status.Addresses = orig.Status.Addresses
	newData, err := json.Marshal(diff)
	if err != nil {
		return nil, fmt.Errorf("encoding node %s: %w", orig.Name, err)
	}
	p, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Node{})
	if err != nil {
		return nil, fmt.Errorf("computing the status patch of node %s: %w", orig.Name, err)
	}
	var patch map[string]any
	if err := json.Unmarshal(p, &patch); err != nil {
		return nil, fmt.Errorf("decoding the status patch of node %s: %w", orig.Name, err)
	}
	meta, _ := patch["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		patch["metadata"] = meta
	}
	meta["resourceVersion"] = orig.ResourceVersion
	if replaceAddresses {
		status, _ := patch["status"].(map[string]any)
		if status == nil {
			status = map[string]any{}
			patch["status"] = status
		}
		addrs := make([]any, 0, len(want.Status.Addresses)+1)
		for _, a := range want.Status.Addresses {
			addrs = append(addrs, map[string]any{"type": string(a.Type), "address": a.Address})
		}
		status["addresses"] = append(addrs, map[string]any{"$patch": "replace"})
	}
	return json.Marshal(patch)
}
