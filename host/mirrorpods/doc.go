// Package mirrorpods owns the mirror pods of static pods in the API server
// (Kubernetes mode): lifecycle.MirrorPods over client-go, with the node's
// own credentials. A mirror is a copy of the static pod's metadata and
// spec that carries the static pod's content hash in
// kubernetes.io/config.mirror and is owned by this node's Node object, as
// the NodeRestriction admission plugin requires of a node's mirror pods.
//
// host/node imports it: the lifecycle Syncer creates and replaces mirrors,
// housekeeping deletes orphaned ones (docs/lifecycle.md, 5(j)).
package mirrorpods
