package ownership

import (
	"errors"
	"io/fs"

	v1 "k8s.io/api/core/v1"
)

// The bits the walk adds, as the kubelet adds them: read and write (read
// only on a read-only volume) for owner and group, and search for owner
// and group on directories.
const (
	rwBits     fs.FileMode = 0o660
	roBits     fs.FileMode = 0o440
	searchBits fs.FileMode = 0o110
)

// Options is what a pod asks of a volume's ownership.
type Options struct {
	// FSGroup is the pod's securityContext.fsGroup.
	FSGroup int64
	// Policy is the pod's fsGroupChangePolicy; "" is Always.
	Policy v1.PodFSGroupChangePolicy
	// ReadOnly is a read-only volume: no write bits are added.
	ReadOnly bool
}

// ErrIncomplete is wrapped by the error of a walk that changed what it
// could but failed on some entries (a chown or chmod refused). The kubelet
// logs such failures and sets the volume up anyway; a caller may too.
var ErrIncomplete = errors.New("volume ownership changed incompletely")

// Mode is the mode an entry of mode m ends with after the walk: the
// permission, setuid, setgid and sticky bits of m with the walk's bits
// added. A symbolic link keeps its mode.
func Mode(m fs.FileMode, readOnly bool) fs.FileMode {
	if m&fs.ModeSymlink != 0 {
		return m
	}
	add := rwBits
	if readOnly {
		add = roBits
	}
	if m.IsDir() {
		add |= searchBits | fs.ModeSetgid
	}
	return m | add
}

// rootMatches reports whether a root of mode m and group gid already is
// what the walk would make it, the test of OnRootMismatch: the group is
// fsGroup, and it is a directory with the setgid bit and at least the
// walk's permission bits.
func rootMatches(m fs.FileMode, gid int64, o Options) bool {
	if gid != o.FSGroup || !m.IsDir() || m&fs.ModeSetgid == 0 {
		return false
	}
	want := Mode(m&fs.ModeDir, o.ReadOnly).Perm()
	return m.Perm()&want == want
}

// skip reports whether the walk may be skipped for a root of mode m and
// group gid.
func skip(m fs.FileMode, gid int64, o Options) bool {
	return o.Policy == v1.FSGroupChangeOnRootMismatch && rootMatches(m, gid, o)
}
