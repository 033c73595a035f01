// Package manifest owns podhost's manifest directory: decoding the static
// pod manifests in it and watching it for changes.
//
// [Decode] turns one file into pods, PersistentVolumes,
// PersistentVolumeClaims, ConfigMaps and Secrets. A file is YAML or JSON
// with one or more documents separated by "---" lines; each document is
// apiVersion v1 and kind Pod, PersistentVolume, PersistentVolumeClaim,
// ConfigMap or Secret (its stringData folded into data, as the API server
// stores it). Decoding is strict: an unknown
// or duplicated field is an error naming it. Defaults are applied, then
// every object is validated with sources/podvalidate. Every problem is a
// [*DocumentError] naming the file, the document (counted from 1, blank
// documents included) and the field; a bad document never hides the good
// ones around it.
//
// Static pods follow the kubelet's conventions: the name gets "-<node name>"
// appended, spec.nodeName is the node, and the annotations
// kubernetes.io/config.source ("file"), kubernetes.io/config.hash (the UID)
// and kubernetes.io/config.seen are set. The UID is a hash of the node name,
// the file path and the decoded document, so an edited document is a new pod
// and the same content at the same path is the same pod again. A uid in the
// manifest itself is ignored.
//
// [Source] watches a directory with fsnotify plus a periodic rescan and
// sends a complete sources.Snapshot whenever the result changed. Dotfiles,
// editor temporaries and subdirectories are ignored. A missing directory is
// not fatal: the source reports an empty snapshot carrying an error (so
// housekeeping is not blocked) and picks the directory up when it appears.
//
// host/node runs the Source, and sources/apisource decodes applied pods
// with the same strict decoder; both import this package. It imports
// sources and sources/podvalidate, never lifecycle/ or host/.
package manifest
