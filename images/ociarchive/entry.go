package ociarchive

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// EntryType is the kind of a filesystem entry in the image's layer.
type EntryType int

// The entry types a layer may hold.
const (
	TypeFile EntryType = iota
	TypeDir
	TypeSymlink
)

func (t EntryType) String() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "dir"
	case TypeSymlink:
		return "symlink"
	}
	return fmt.Sprintf("EntryType(%d)", int(t))
}

// Entry is one file, directory or symlink of the image's root filesystem.
type Entry struct {
	Path   string      // slash-separated path in the rootfs; a leading "/" is optional
	Type   EntryType   //
	Mode   fs.FileMode // permission bits (and sticky, setuid, setgid)
	Data   []byte      // contents of a file
	Target string      // target of a symlink
	// UID and GID own the entry; zero, root, unless set.
	UID, GID int
}

// File returns a regular file entry.
func File(name string, mode fs.FileMode, data []byte) Entry {
	return Entry{Path: name, Type: TypeFile, Mode: mode, Data: data}
}

// Dir returns a directory entry.
func Dir(name string, mode fs.FileMode) Entry {
	return Entry{Path: name, Type: TypeDir, Mode: mode}
}

// Symlink returns a symbolic link entry pointing at target.
func Symlink(name, target string) Entry {
	return Entry{Path: name, Type: TypeSymlink, Mode: 0o777, Target: target}
}

// cleanPath returns the layer form of name: relative, cleaned, no trailing
// slash. It rejects paths that leave the rootfs or name the root itself.
func cleanPath(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("empty path")
	}
	p := path.Clean("/" + name)
	if p == "/" {
		return "", fmt.Errorf("path %q names the root", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("path %q leaves the rootfs", name)
		}
	}
	return strings.TrimPrefix(p, "/"), nil
}

// normalize cleans every path, adds missing parent directories (0755),
// rejects duplicates and sorts the entries by path so that output is
// deterministic.
func normalize(entries []Entry) ([]Entry, error) {
	byPath := make(map[string]Entry, len(entries))
	for _, e := range entries {
		p, err := cleanPath(e.Path)
		if err != nil {
			return nil, err
		}
		switch e.Type {
		case TypeFile, TypeDir:
		case TypeSymlink:
			if e.Target == "" {
				return nil, fmt.Errorf("symlink %q has no target", e.Path)
			}
		default:
			return nil, fmt.Errorf("entry %q: unknown type %v", e.Path, e.Type)
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("duplicate entry %q", p)
		}
		e.Path = p
		byPath[p] = e
	}
	for p := range byPath {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			existing, ok := byPath[dir]
			if !ok {
				byPath[dir] = Dir(dir, 0o755)
				continue
			}
			if existing.Type != TypeDir {
				return nil, fmt.Errorf("%q is a parent of %q but not a directory", dir, p)
			}
		}
	}
	out := make([]Entry, 0, len(byPath))
	for _, e := range byPath {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
