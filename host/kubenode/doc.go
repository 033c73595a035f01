// Package kubenode owns this host's Node object in a Kubernetes API server:
// it registers the Node, keeps its status (conditions, addresses, capacity,
// allocatable, daemon endpoints, node info, volumes in use) and renews its
// Lease in kube-node-lease, as a kubelet does for its node. It knows nothing of pods;
// the pod source and status sink live elsewhere. Only host/node imports this
// package.
//
// [Agent.Run] registers first: it creates the Node, or, when one of that
// name exists, takes it over as a restarting kubelet does, setting the
// labels it owns and its status and leaving alone what others set (taints,
// annotations, other labels, conditions it does not own). While the API
// server is unreachable it retries with back-off (200 ms doubling to 7 s);
// it never gives up until its context ends. Then two loops run:
//
//   - the lease loop renews the Lease named after the node every
//     RenewInterval (10 s, a quarter of LeaseDuration, 40 s), with the
//     holder identity set to the node name and an owner reference to the
//     Node; it updates optimistically from the Lease it wrote last, re-reads
//     on a conflict and recreates the Lease when it was deleted;
//   - the status loop measures every StatusFrequency (10 s) and patches the
//     status subresource only when something it owns changed, or else every
//     ReportFrequency (5 min, with the kubelet's random spread of the first
//     period). The patch is a strategic merge patch computed between the
//     Node just read and the Node with this agent's fields set, carrying
//     that read's resourceVersion: a write by someone else in between gives
//     a conflict, and the agent re-reads and retries (at most 5 times per
//     round). A Node that was deleted is registered again.
//
// status.volumesInUse is Options.VolumesInUse, set once the node knows its
// volumes (until then the Node's list stays), and every list the API
// server accepted goes to Options.VolumesReported: the attach/detach
// controller does not detach a volume a node reports in use, and a node
// stages a volume that needs attaching only once it was reported.
//
// Conditions keep the kubelet's Type and Reason strings, which tooling
// reads (KubeletReady/KubeletNotReady, KubeletHasSufficientMemory/
// KubeletHasInsufficientMemory, KubeletHasNoDiskPressure/
// KubeletHasDiskPressure, KubeletHasSufficientPID/KubeletHasInsufficientPID),
// with podhost's own messages. lastHeartbeatTime moves on every post,
// lastTransitionTime only when the status changes. Ready is False with the
// reasons of [Health.NotReady] joined, or when cpu, memory, pods or
// ephemeral-storage is missing from the capacity. MemoryPressure and
// DiskPressure are Options.Pressure's when it is set (host/node wires the
// eviction manager's, which keeps them for its transition period), else
// the machine measured against Options.Thresholds.
//
// Events on the Node are the kubelet's, through a client-go event recorder
// with the node's credentials (Options.Recorder in tests): Starting
// ("Starting kubelet.") when Run begins, and after each status write that
// the API server accepted, one event per owned condition whose status
// changed or that the Node did not have, in the conditions' order:
// NodeHasSufficientMemory/NodeHasInsufficientMemory,
// NodeHasNoDiskPressure/NodeHasDiskPressure,
// NodeHasSufficientPID/NodeHasInsufficientPID and NodeReady/NodeNotReady,
// each "Node NAME status is now: REASON", source component kubelet, and the
// node's name as the object's UID as a kubelet sets it (kubectl describe
// node looks events up so). A new Node's Ready is reported too, where a
// kubelet stays quiet about a Ready condition it creates. RegisteredNode is
// the node controller's, not recorded here.
//
// Everything is done with the permissions a kubelet has under the Node
// authorizer and NodeRestriction: the agent reads and writes only its own
// Node (and its status) and its own Lease, creates events, sets only
// labels a node may set on itself (New refuses others), and never writes
// the Node's spec, so an admin's taints survive.
//
// The decisions are plain Go types tested with an injected clock:
// conditions and their transitions (conditions.go), the events of the
// transitions (events.go), whether a status post is due (report.go), and
// when to renew or retry a heartbeat (heartbeat.go).
// The loops around them (agent.go, register.go, status.go, lease.go) do the
// API calls. k8s.io/component-helpers' lease controller is not used: it logs
// through klog only, waits on the wall clock in its back-off (time.After),
// so an injected clock cannot drive it, and it reports no success, so the
// agent could neither count failed heartbeats nor log when the API server
// came back. The machine is measured behind small function types
// (machine.go) so that the parsers take bytes and tests take fixtures.
//
// Metrics (registered through Options.Registry):
// podhost_kubenode_heartbeat_failures_total{heartbeat="register"|"status"|"lease"},
// podhost_kubenode_status_posts_total and
// podhost_kubenode_lease_renewals_total.
package kubenode
