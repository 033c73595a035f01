// Package mount holds the mount steps a volume plugin repeats in Stage,
// Publish, Unpublish and Unstage, each safe to call again after it took
// effect, or after an interrupted call took effect in part:
//
//   - IsMounted tells whether a path is a mount point (a path that does not
//     exist is not; a stale mount is);
//   - BindOnce bind-mounts a directory, read-only if asked, unless the
//     target shows it already (sdk.ErrAlreadyExists when the target shows
//     another directory, or this one in the other mode);
//   - FormatAndMount mounts a device, formatting it first when it holds no
//     filesystem, unless the target is mounted already;
//   - Unmount unmounts everything stacked on a path and keeps the
//     directory (a staging path, which the host removes);
//     UnmountAndRemove also removes it (a target path, which the plugin
//     removes);
//   - MountUsage reads the usage of the filesystem mounted on a path, for
//     GetMetrics (ErrNotMounted when nothing is), and FilesystemUsage that
//     of the filesystem holding any path;
//   - MountedFrom tells whether a mount point shows a given directory, to
//     tell "staged already" from "another volume is staged here".
//
// It runs on k8s.io/mount-utils, which calls the mount(8) and umount(8)
// commands of the node. Volume plugins import it; of podhost it imports
// only sdk, whose VolumeUsage and ErrNotFound its Usage and ErrNotMounted
// are.
package mount
