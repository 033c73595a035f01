// Package ownership gives a volume's files to a pod's fsGroup, as the
// kubelet's SetVolumeOwnership does when a volume that supports ownership
// management is set up: every file, directory and symbolic link under the
// volume's directory gets the group fsGroup; files and directories get
// read and write for owner and group added (read only for a read-only
// volume), directories also search (x) for owner and group and the setgid
// bit, so that what a container creates there later belongs to fsGroup
// too. Symbolic links are never followed: the walk opens every entry
// relative to its directory without following links, changes a link's own
// group and never its mode, and so cannot leave the volume whatever a
// container renames under it while it runs.
//
// The policy OnRootMismatch skips the walk when the volume's root already
// has the group and the mode the walk would give it (the kubelet's
// fsGroupChangePolicy); Always, or none, walks every time.
//
// [Mode] is the pure rule (the permission bits an entry ends with), for
// callers that compare what they wrote with what they want. The walk is
// Linux-only (ownership_linux.go); elsewhere [Change] fails.
//
// Who may import it: the volume set-up code of the host
// (host/volumemanager/hostvolumes, host/volumemanager/apivolumes,
// host/volumeplugins). The reconciler never calls it: the walk is I/O.
package ownership
