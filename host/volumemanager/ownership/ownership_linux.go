package ownership

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Change gives the volume at dir to o.FSGroup (see the package doc). It
// fails when a directory of the volume cannot be read; when only some
// chown or chmod calls failed, it changes everything else and returns an
// error wrapping ErrIncomplete. dir itself is not followed if it is a
// symbolic link.
func Change(dir string, o Options) error {
	root, err := unix.Open(dir, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening volume %s: %w", dir, err)
	}
	defer unix.Close(root)
	var st unix.Stat_t
	if err := unix.Fstat(root, &st); err != nil {
		return fmt.Errorf("reading volume %s: %w", dir, err)
	}
	if skip(fileMode(st.Mode), int64(st.Gid), o) {
		return nil
	}
	w := walker{o: o}
	if err := w.entry(root, &st, dir); err != nil {
		return err
	}
	if w.failed > 0 {
		return fmt.Errorf("%w: %d of %d entries of %s, the first: %w", ErrIncomplete, w.failed, w.seen, dir, w.first)
	}
	return nil
}

type walker struct {
	o            Options
	seen, failed int
	first        error
}

// entry changes the entry that fd (opened with O_PATH, not following a
// link) refers to, after everything under it when it is a directory.
func (w *walker) entry(fd int, st *unix.Stat_t, path string) error {
	w.seen++
	m := fileMode(st.Mode)
	if m.IsDir() {
		names, err := readNames(fd, path)
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := w.child(fd, name, filepath.Join(path, name)); err != nil {
				return err
			}
		}
	}
	// AT_EMPTY_PATH on an O_PATH descriptor changes the entry itself,
	// the link and not its target for a symbolic link.
	w.note(path, unix.Fchownat(fd, "", -1, int(w.o.FSGroup), unix.AT_EMPTY_PATH))
	if m&fs.ModeSymlink != 0 {
		return nil
	}
	// The descriptor's /proc link reaches the very inode opened, whatever
	// has been renamed since.
	w.note(path, unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), unixMode(Mode(m, w.o.ReadOnly))))
	return nil
}

// child opens name in the directory dir without following a link and
// walks it; an entry removed meanwhile is skipped.
func (w *walker) child(dir int, name, path string) error {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return w.entry(fd, &st, path)
}

func (w *walker) note(path string, err error) {
	if err == nil {
		return
	}
	w.failed++
	if w.first == nil {
		w.first = fmt.Errorf("%s: %w", path, err)
	}
}

// readNames lists the directory that fd refers to.
func readNames(fd int, path string) ([]string, error) {
	dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening directory %s: %w", path, err)
	}
	f := os.NewFile(uintptr(dfd), path)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("reading directory %s: %w", path, err)
	}
	return names, nil
}

// specialBits pair the setuid, setgid and sticky bits of a stat mode
// with their fs.FileMode bits.
var specialBits = [...]struct {
	unix uint32
	fs   fs.FileMode
}{{unix.S_ISUID, fs.ModeSetuid}, {unix.S_ISGID, fs.ModeSetgid}, {unix.S_ISVTX, fs.ModeSticky}}

// fileMode is the fs.FileMode of a stat mode: type, permission, setuid,
// setgid and sticky bits.
func fileMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	default:
		m |= fs.ModeIrregular
	}
	for _, b := range specialBits {
		if mode&b.unix != 0 {
			m |= b.fs
		}
	}
	return m
}

// unixMode is the chmod argument of m.
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	for _, b := range specialBits {
		if m&b.fs != 0 {
			u |= b.unix
		}
	}
	return u
}
