package kubesource

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Container IDs in a pod status have two forms. The API server shows them
// as a kubelet writes them, "<runtime type>://<id>" (containerd://3f…);
// the node keeps the runtime's own IDs everywhere else (the status
// manager's cache, state.db, the local API and CLI, every lookup by ID),
// so the type is added and taken off at the API server's edge only: the
// sink (host/kubestatus) sets it on what it writes and strips it from what
// it reads, and this source strips it from the pods it reports.

// typeSeparator separates the runtime type from the ID.
const typeSeparator = "://"

// SetContainerIDType gives every container ID of s that has no type the
// runtime type typ ("containerd"); IDs with a type keep theirs. An empty
// typ changes nothing.
func SetContainerIDType(s *v1.PodStatus, typ string) {
	if typ == "" {
		return
	}
	mapContainerIDs(s, func(id string) string {
		if id == "" || strings.Contains(id, typeSeparator) {
			return id
		}
		return typ + typeSeparator + id
	})
}

// StripContainerIDTypes takes the runtime type off every container ID of
// s, leaving the runtime's IDs.
func StripContainerIDTypes(s *v1.PodStatus) {
	mapContainerIDs(s, func(id string) string {
		if _, after, ok := strings.Cut(id, typeSeparator); ok {
			return after
		}
		return id
	})
}

// mapContainerIDs replaces every container ID of s (each container's, and
// those of its terminated states) with f of it.
func mapContainerIDs(s *v1.PodStatus, f func(string) string) {
	for _, list := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			c := &list[i]
			c.ContainerID = f(c.ContainerID)
			for _, st := range []*v1.ContainerState{&c.State, &c.LastTerminationState} {
				if st.Terminated != nil {
					st.Terminated.ContainerID = f(st.Terminated.ContainerID)
				}
			}
		}
	}
}
