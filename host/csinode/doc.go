// Package csinode owns, in Kubernetes mode, what the kubelet keeps in the
// API server about the CSI drivers registered on its node: the node's
// CSINode object (storage.k8s.io/v1, named after the node, owned by the
// Node) with one spec.drivers entry per driver (its name, the nodeID of its
// NodeGetInfo, its topology keys, and allocatable.count from
// max_volumes_per_node when the driver sets one), the Node's topology
// labels (the driver's accessible_topology segments) and the Node's
// csi.volume.kubernetes.io/nodeid annotation (driver → node ID, JSON),
// which the external attacher and older tooling read.
//
// [Keeper.Install] adds or replaces a driver's entry and labels;
// [Keeper.Uninstall] removes its entry and annotation key (the topology
// labels stay, as with the kubelet: another driver may share them). A
// label that clashes with a different value already on the Node is
// refused, naming the key, as the kubelet refuses it. Writes are
// read-modify-write with the object's resourceVersion and retried on a
// conflict, so a concurrent writer (the node agent's status, an admin's
// label) is never overwritten. Only the node's own objects are touched,
// as the Node authorizer allows a kubelet.
//
// host/node calls it from the plugin registration handler once the volume
// plugin took the driver; a failed Install undoes the registration. It
// imports no other host package.
package csinode
