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
// and never leaving the volume through a symbolic link.
//
// A subPath is never handed to the runtime as a path, which a container
// sharing the volume could swap for a link to / between the check and the
// runtime's mount (CVE-2017-1002101, CVE-2021-25741). As the kubelet,
// ContainerMounts resolves the links of the sub path once (those inside
// the volume, such as a configMap's keys, are allowed), then opens the
// result one component at a time from the volume root with
// openat(O_PATH|O_NOFOLLOW), refusing any link, making a missing
// directory with mkdirat and opening it the same way; it bind-mounts the
// descriptor's /proc/self/fd link (the open file, whatever the path shows
// since) at SubPathTarget, <pod dir>/volume-subpaths/<volume>/<container>
// /<index>, checks that the target shows the file opened, and gives the
// runtime the target. A container's restart keeps a target that still
// shows the same file. The per-component openat was chosen over openat2
// (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) because the creation of missing
// directories needs the walk a component at a time anyway, and it works
// on kernels before 5.6. CleanSubPaths unmounts (every stacked mount) and
// removes the targets of a pod's volume from the disk and the mount
// table, not from memory, so it finds what a previous run left; the
// volume plugins' Unpublish calls it for every volume kind before the
// volume is torn down, as the kubelet's unmount does, which after a host
// restart happens through reconstruction. A target is never removed
// recursively. The refusal says the kubelet's words ("failed to prepare
// subPath for volumeMount ...") and a reason naming the sub path only,
// never a host path. A mount's
// mountPropagation becomes the contract's (HostToContainer rslave,
// Bidirectional rshared, privileged containers only); MakeRShared makes
// the host's root dir a shared mount at start, as the kubelet its own, so
// that the mounts made under a volume later propagate.
//
// Pod volume directories are <root>/pods/<uid>/volumes/<plugin>/<name>,
// the plugin's name with "/" written "~" (kubernetes.io~empty-dir).
//
// Mounting is behind the small Mounter interface; the Linux one uses
// mount(2) and the mount table (moby/sys/mountinfo). Sub paths are only
// mounted on Linux.
//
// Who may import it: host/node and host/volumeplugins, and cmd/host for
// MakeRShared.
package hostvolumes
