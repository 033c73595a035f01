// Package kubesource owns the "apiserver" source: the pods a Kubernetes API
// server binds to this node (field selector spec.nodeName=NODE), watched
// with a client-go informer and reported as complete sources.Snapshot
// values, newest only, like the other sources.
//
// The first snapshot is sent only once the informer's initial list has
// been delivered, so the merged desired set is not Synced (and housekeeping
// orphans nothing) before the node knows every pod bound to it. After that
// every change (add, update, delete, a relist after the watch broke) sends
// the whole set again; changes that come faster than the node reads are
// folded into one snapshot. While the API server is unreachable the last
// snapshot stands: the informer retries, and pods keep running.
//
// Each pod in a snapshot is a copy with the annotations the kubelet puts on
// pods from the API server: kubernetes.io/config.source "api" (so that the
// pod is not static) and kubernetes.io/config.seen, the time this source
// first saw the UID. Mirror pods (kubernetes.io/config.mirror) are left
// out: they stand for static pods of this node, which run from their own
// source. The container IDs in their status lose the runtime type the API
// server shows ("containerd://"): the node knows containers by the
// runtime's IDs (containerids.go says where the type is added). Pods are
// not validated here; the merger validates every source's
// pods with sources/podvalidate and rejects an invalid one with the field.
//
// The host and tests may import this package; it imports sources and
// client-go, never lifecycle/ or host/.
package kubesource
