package apivolumes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/podhost/podhost/host/volumemanager/ownership"
)

// wantMode is the permission bits a file of mode m has once written, with
// the read bits a walk for group adds.
func wantMode(m fs.FileMode, group *int64) fs.FileMode {
	if group == nil {
		return m.Perm()
	}
	return ownership.Mode(m.Perm(), true).Perm()
}

// dataLink is the symbolic link that names the directory holding the
// current version of a volume's files.
const dataLink = "..data"

// File is one file of a volume: its content and permission bits.
type File struct {
	Data []byte
	Mode fs.FileMode
}

// checkPath refuses a file path that is absolute, climbs out with "..",
// or starts with "..", which the writer keeps for itself.
func checkPath(p string) error {
	switch {
	case p == "" || filepath.IsAbs(p):
		return fmt.Errorf("file path %q: must be a relative path", p)
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("file path %q: must not start with \"..\"", p)
	case slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".."):
		return fmt.Errorf("file path %q: must not contain \"..\"", p)
	}
	return nil
}

// WriteAtomic makes dir hold exactly files (path → file) as one version:
// the files go into a new hidden directory, "..data" is switched to it by
// a rename, each top-level name is a symbolic link through "..data", and
// the previous version and names no longer present are removed. It
// changes nothing when dir already holds exactly these files, and reports
// whether it wrote.
//
// With a group (the pod's fsGroup), the whole volume is given to it
// before the new version becomes visible, as the kubelet does: a
// read-only volume's walk (ownership.Change), so every file gets group
// read and every directory group search and the setgid bit; "exactly
// these files" then includes that group and those modes.
func WriteAtomic(dir string, files map[string]File, group *int64) (bool, error) {
	for p := range files {
		if err := checkPath(p); err != nil {
			return false, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("creating volume directory: %w", err)
	}
	old, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("reading %s: %w", dataLink, err)
	}
	if old != "" && same(filepath.Join(dir, old), files, group) {
		return false, nil
	}
	version, err := os.MkdirTemp(dir, "..version-")
	if err != nil {
		return false, fmt.Errorf("creating a version directory: %w", err)
	}
	if err := writeFiles(version, files); err != nil {
		os.RemoveAll(version)
		return false, err
	}
	if err := os.Chmod(version, 0o755); err != nil {
		os.RemoveAll(version)
		return false, err
	}
	if group != nil {
		if err := ownership.Change(dir, ownership.Options{FSGroup: *group, ReadOnly: true}); err != nil {
			os.RemoveAll(version)
			return false, err
		}
	}
	if err := replaceLink(dir, dataLink, filepath.Base(version)); err != nil {
		os.RemoveAll(version)
		return false, err
	}
	top := map[string]bool{}
	for p := range files {
		name, _, _ := strings.Cut(filepath.ToSlash(p), "/")
		top[name] = true
	}
	for name := range top {
		want := filepath.Join(dataLink, name)
		if got, err := os.Readlink(filepath.Join(dir, name)); err == nil && got == want {
			continue
		}
		if err := replaceLink(dir, name, want); err != nil {
			return true, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return true, err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") || top[name] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return true, fmt.Errorf("removing stale %s: %w", name, err)
		}
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			return true, fmt.Errorf("removing the previous version: %w", err)
		}
	}
	return true, nil
}

// replaceLink points dir/name at target with a rename over any old entry.
func replaceLink(dir, name, target string) error {
	tmp := filepath.Join(dir, "..tmp-"+name)
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("linking %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("switching %s: %w", name, err)
	}
	return nil
}

func writeFiles(root string, files map[string]File) error {
	for p, f := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("file %s: %w", p, err)
		}
		if err := os.WriteFile(full, f.Data, f.Mode.Perm()); err != nil {
			return fmt.Errorf("file %s: %w", p, err)
		}
		if err := os.Chmod(full, f.Mode.Perm()); err != nil { // past the umask
			return fmt.Errorf("file %s: %w", p, err)
		}
	}
	return nil
}

// same reports whether the version directory holds exactly files, with
// the modes and the group a walk for group gives them.
func same(version string, files map[string]File, group *int64) bool {
	n := 0
	err := filepath.WalkDir(version, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(version, path)
		f, ok := files[rel]
		if !ok {
			return errors.New("extra file")
		}
		info, err := d.Info()
		if err != nil || info.Mode().Perm() != wantMode(f.Mode, group) {
			return errors.New("mode differs")
		}
		if st, ok := info.Sys().(*syscall.Stat_t); group != nil && (!ok || int64(st.Gid) != *group) {
			return errors.New("group differs")
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(b, f.Data) {
			return errors.New("content differs")
		}
		n++
		return nil
	})
	return err == nil && n == len(files)
}
