// Package hostvolumes owns the volumes the host serves itself, without a
// plugin: emptyDir (a directory under the pod's directory, a tmpfs for
// medium Memory) and hostPath (a path of the host, checked against its
// type as the kubelet checks it). Host implements the publish half of
// volumemanager.Plugins for them, lists the pod volume directories for
// reconstruction, rebuilds emptyDir volumes from them, and says where on
// the host each volume of a pod is, for the container mounts.
//
// An emptyDir of a pod with an fsGroup is given to that group at each
// set-up (host/volumemanager/ownership), and a subPath created in a volume
// gets the volume root's mode (so its setgid bit), as the kubelet does.
// A mount's subPathExpr is expanded from the container's env
// (host/expansion, the kubelet's rules: a variable without a value is an
// error) and is then a subPath like any other: relative, without "..",
// and never leaving the volume through a symbolic link. A mount's
// mountPropagation becomes the contract's (HostToContainer rslave,
// Bidirectional rshared, privileged containers only); MakeRShared makes
// the host's root dir a shared mount at start, as the kubelet its own, so
// that the mounts made under a volume later propagate.
//
// Pod volume directories are <root>/pods/<uid>/volumes/<plugin>/<name>,
// the plugin's name with "/" written "~" (kubernetes.io~empty-dir).
//
// Mounting is behind the small Mounter interface; the Linux one uses
// mount(2) and the mount table (moby/sys/mountinfo).
//
// Who may import it: host/node and host/volumeplugins, and cmd/host for
// MakeRShared.
package hostvolumes
