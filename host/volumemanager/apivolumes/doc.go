// Package apivolumes owns the pod volumes whose content comes from the API
// server, the host's sources or the pod itself: projected volumes
// (serviceAccountToken, configMap, secret and downwardAPI projections, the
// kube-api-access volume the ServiceAccount admission plugin adds to every
// pod), and plain configMap, secret and downwardAPI volumes, which are a
// projected volume of one source. Config.Client says per pod where its
// configMaps, secrets and tokens are read (the API server for its pods,
// the ConfigMaps and Secrets of the host's sources for the others); the
// downward API items' values are computed by host/downwardapi (a
// container's unset limit is Config.Allocatable).
//
// Files are written under the pod's volume directory
// (<root>/pods/<uid>/volumes/kubernetes.io~projected/<name>/) by
// [WriteAtomic]: each version goes into a fresh hidden directory and a
// "..data" symbolic link is renamed onto it, so that a container reading
// the volume sees the old set of files or the new, never a mix. The writer
// is written here rather than taken from a library: the one that does this
// is the kubelet's (k8s.io/kubernetes/pkg/volume/util), which drags the
// whole kubernetes module into the host, and the pattern is small.
//
// For a pod with an fsGroup, each new version is given to the group
// before it becomes visible (host/volumemanager/ownership, the read-only
// rule: group read, setgid directories), and a service-account token is
// written 0600 so that it ends 0640, as the kubelet writes them.
//
// [Volumes] publishes and unpublishes such volumes for the volume manager
// and keeps them fresh: every period it re-reads the configMaps and
// secrets and renders the downward API items from the newest desired pod
// (and [Volumes.RefreshPod], which each sync of the pod calls, rewrites
// them at once when its labels or annotations changed), and it asks for a
// new service-account token (TokenRequest, bound to the pod) once 80 % of
// the token's lifetime has passed or 24 hours after it was issued,
// whichever comes first, as the kubelet does.
// Time is an injected clock. Only the host (host/node, and host/volumeplugins,
// which routes volumes to it) imports this package.
package apivolumes
