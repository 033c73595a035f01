package eviction

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// diskUsage is the space the tree at root takes on disk, as `du -sx`
// counts it: allocated blocks of every entry, each inode once, nothing on
// another filesystem than root's. Symbolic links are not followed. A
// missing root is zero; an entry that vanishes during the walk is skipped.
func diskUsage(root string) (uint64, error) {
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rootSt, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errors.New("no stat of " + root)
	}
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	var total uint64
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if uint64(st.Dev) != uint64(rootSt.Dev) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		key := inode{uint64(st.Dev), st.Ino}
		if seen[key] {
			return nil
		}
		seen[key] = true
		total += uint64(st.Blocks) * 512
		return nil
	})
	return total, err
}

// deviceOf is the device of the filesystem holding path.
func deviceOf(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Dev), nil
}
