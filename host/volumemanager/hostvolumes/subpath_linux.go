package hostvolumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// pathFlags open one path component without following it: a symbolic
// link gives a descriptor of the link itself, which fstat then tells.
const pathFlags = unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC

// subPathHook, when set (by tests), runs at two points of bindSubPath:
// "resolved", after the symbolic links of the sub path were resolved and
// before it is opened, and "opened", after it is opened and before it is
// bind-mounted. These are the windows of the time-of-check/time-of-use
// race of CVE-2017-1002101 and CVE-2021-25741: a link swapped in at the
// first fails the open, one swapped in at the second is not seen by the
// bind mount of the descriptor.
var subPathHook func(stage string)

// bindSubPath bind-mounts sub, a relative path without "..", of the
// volume at volPath onto target, so that target shows the file or
// directory that openSubPath found inside the volume, whatever the
// volume's users change afterwards. A target that already shows that file
// (a container's restart) is kept; one showing another file is unmounted
// and bound again. The errors name sub, never a path of the host.
func (h *Host) bindSubPath(volPath, sub, target string) error {
	fd, err := openSubPath(volPath, sub)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if subPathHook != nil {
		subPathHook("opened")
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("reading %q: %w", sub, err)
	}
	mounted, err := h.m.IsMountPoint(target)
	if err != nil {
		return fmt.Errorf("the mount target of %q: %w", sub, err)
	}
	if mounted {
		if sameFile(target, &st) {
			return nil
		}
		if err := h.unmountAll(target); err != nil {
			return fmt.Errorf("the mount target of %q: %w", sub, err)
		}
	}
	if err := makeTarget(target, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return fmt.Errorf("the mount target of %q: %w", sub, err)
	}
	if err := h.m.BindFD(fd, target); err != nil {
		_ = h.cleanSubPathTarget(target)
		return fmt.Errorf("mounting %q: %w", sub, err)
	}
	return nil
}

// sameFile reports whether path (not followed) is the file of st.
func sameFile(path string, st *unix.Stat_t) bool {
	var t unix.Stat_t
	return unix.Lstat(path, &t) == nil && t.Dev == st.Dev && t.Ino == st.Ino
}

// makeTarget makes target a directory (dir) or an empty file, what a bind
// mount of that kind needs, replacing one of the other kind.
func makeTarget(target string, dir bool) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return err
	}
	if fi, err := os.Lstat(target); err == nil {
		if fi.IsDir() == dir {
			return nil
		}
		if err := os.Remove(target); err != nil {
			return err
		}
	}
	if dir {
		return os.Mkdir(target, 0o750)
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|unix.O_NOFOLLOW, 0o640)
	if err != nil {
		return err
	}
	return f.Close()
}

// openSubPath opens sub inside the volume at volPath and returns the
// descriptor (O_PATH for what existed, O_RDONLY for a directory it
// made). Symbolic links in sub are resolved once, as the kubelet resolves
// them (a configMap's keys are links inside the volume), and the result
// must be inside the volume. The resolved path is then opened a component
// at a time from the volume's root with openat(O_PATH|O_NOFOLLOW),
// refusing a symbolic link anywhere: a component swapped for a link
// after the resolution fails the open instead of being followed. A
// missing directory is made the same way (mkdirat, then opened without
// following), with the volume root's mode.
func openSubPath(volPath, sub string) (int, error) {
	realRoot, err := filepath.EvalSymlinks(volPath)
	if err != nil {
		return -1, fmt.Errorf("resolving the volume: %w", withoutPath(err))
	}
	path := filepath.Join(realRoot, sub)
	existing := path
	for existing != realRoot {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return -1, fmt.Errorf("resolving %q: %w", sub, withoutPath(err))
	}
	inside, ok := within(realRoot, real)
	if !ok {
		return -1, fmt.Errorf("%q leaves the volume", sub)
	}
	missing, _ := filepath.Rel(existing, path)
	var names []string
	for _, p := range []string{inside, missing} {
		if p != "." {
			names = append(names, strings.Split(p, string(filepath.Separator))...)
		}
	}
	if subPathHook != nil {
		subPathHook("resolved")
	}
	fd, err := unix.Open(realRoot, pathFlags|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, fmt.Errorf("opening the volume: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("reading the volume: %w", err)
	}
	// The directories made get the volume root's mode, as the kubelet
	// makes them: an emptyDir's 0777, with the setgid bit (and fsGroup,
	// inherited) of a pod with an fsGroup, and a tmpfs's sticky bit.
	mode := st.Mode & 0o7777
	for i, name := range names {
		at := filepath.Join(names[:i+1]...)
		child, err := unix.Openat(fd, name, pathFlags, 0)
		if errors.Is(err, unix.ENOENT) {
			child, err = mkdirAt(fd, name, mode)
		}
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("opening %q: %w", at, err)
		}
		fd = child
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("reading %q: %w", at, err)
		}
		switch typ := st.Mode & unix.S_IFMT; {
		case typ == unix.S_IFLNK:
			unix.Close(fd)
			return -1, fmt.Errorf("unexpected symbolic link %q", at)
		case typ != unix.S_IFDIR && i < len(names)-1:
			unix.Close(fd)
			return -1, fmt.Errorf("opening %q: %w", at, unix.ENOTDIR)
		}
	}
	return fd, nil
}

// mkdirAt makes the directory name in the directory open at dirfd, with
// mode past the umask, and opens it without following a link: one
// swapped in after the mkdirat fails the open. A directory made meanwhile
// (another container's mount of the same sub path) is opened as it is.
func mkdirAt(dirfd int, name string, mode uint32) (int, error) {
	made := true
	if err := unix.Mkdirat(dirfd, name, 0o700); errors.Is(err, unix.EEXIST) {
		made = false
	} else if err != nil {
		return -1, err
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if made {
		if err := unix.Fchmod(fd, mode); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// within is p relative to base, both clean absolute paths, when p is
// base or under it (base "/" included).
func within(base, p string) (string, bool) {
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// withoutPath is err without the host path a *fs.PathError names, for an
// error the pod's status shows.
func withoutPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
