// Package sources owns podhost's desired set: the pods, persistent
// volumes, claims, ConfigMaps and Secrets that every configured source (the
// manifest directory "file", the local API "api", the API server
// "apiserver") says should exist on this node, merged into one.
//
// A source reports complete [Snapshot]s, never deltas. A [Merger] keeps the
// newest snapshot of each source and computes the [Desired] set from them.
// It is a plain state machine: no goroutines, no clock, no I/O; the caller
// feeds it snapshots and hands the result on.
//
// Merging rules:
//  1. An object's identity is its kind and namespace/name. When two
//     claimants (a source together with the origin key within it, such as a
//     manifest file) present the same identity, the claimant that presented
//     it first keeps it; every later claimant's object is rejected with a
//     [*ConflictError], reported on that object, and is not run. When the
//     winner drops the object, the earliest remaining claimant takes over.
//  2. A pod whose persistentVolumeClaim volumes do not all name a claim in
//     the desired set is rejected with the field at fault, except a pod of
//     the API server: its claims are the API server's, resolved when its
//     volumes are mounted. When a source refused such a claim (an
//     [ObjectError] of kind PersistentVolumeClaim), the pod's error ends
//     with the claim's.
//  3. Errors a source reports (a manifest that does not decode or validate)
//     are passed through unchanged; they never affect other objects.
//  4. [Desired.Synced] is true once every source the merger was built with
//     has reported at least once; housekeeping must not orphan pods before.
//
// Subpackages: sources/manifest (the manifest directory source),
// sources/apisource (the local API's), sources/kubesource (the API
// server's) and sources/podvalidate (the rules every pod must satisfy). This package may
// be imported by the host and by sources; it never imports lifecycle/.
package sources
