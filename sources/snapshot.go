package sources

import (
	v1 "k8s.io/api/core/v1"
)

// Names of the sources podhost knows.
const (
	SourceFile      = "file"
	SourceAPI       = "api"
	SourceAPIServer = "apiserver"
)

// Origin says where an object came from.
type Origin struct {
	// Source is the source's name, such as [SourceFile].
	Source string
	// Key identifies the object's container within the source and stays
	// the same across edits: a manifest file's path, an API request's pod
	// key. Two objects of one source with the same Key share a claim.
	Key string
	// Where tells people where to look: "pods/web.yaml: document 2".
	Where string
}

// Pod is a desired pod and its origin.
type Pod struct {
	Pod    *v1.Pod
	Origin Origin
}

// Volume is a statically defined PersistentVolume and its origin.
type Volume struct {
	Volume *v1.PersistentVolume
	Origin Origin
}

// Claim is a statically bound PersistentVolumeClaim and its origin.
type Claim struct {
	Claim  *v1.PersistentVolumeClaim
	Origin Origin
}

// ConfigMap is a ConfigMap a source defines, for the env and volumes of
// the pods that are not the API server's, and its origin.
type ConfigMap struct {
	ConfigMap *v1.ConfigMap
	Origin    Origin
}

// Secret is a Secret a source defines, for the env and volumes of the
// pods that are not the API server's, and its origin. Its data is never
// printed: errors about it name the key, never the value.
type Secret struct {
	Secret *v1.Secret
	Origin Origin
}

// Snapshot is everything one source currently wants. Each snapshot replaces
// the source's previous one. Objects in a snapshot are read-only to
// receivers.
type Snapshot struct {
	Source  string
	Pods    []Pod
	Volumes []Volume
	Claims  []Claim
	// ConfigMaps and Secrets are the objects the source's pods read env
	// and volume files from.
	ConfigMaps []ConfigMap
	Secrets    []Secret
	// Errors are the source's manifests or requests that did not become
	// objects; each names its origin and, where known, the field at fault.
	Errors []error
}
