package runtimemanager

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// logScan finds the container log files a rotation pass must look at by
// reading the log directory, so that a pass over logs that need nothing
// makes no runtime call.
type logScan struct {
	mu sync.Mutex
	// idle are the candidates a pass found written by no running
	// container (an exited container's big log), with the size and
	// modification time they had then: they are skipped until they change.
	idle map[string]fileKey
}

// fileKey tells whether a file changed between two passes; missing marks a
// log whose file is gone but rotated files remain.
type fileKey struct {
	size    int64
	modTime time.Time
	missing bool
}

// candidates returns the logs under root that may need the runtime: a
// file <container>/<attempt>.log bigger than maxBytes, or one that is
// missing beside its rotated files (a reopen failed after the rename).
// Logs found idle before and unchanged since are left out.
func (s *logScan) candidates(root string, maxBytes int64) (map[string]fileKey, error) {
	pattern := filepath.Join(root, "pods", "*", "*", "*.log*")
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("listing container logs: %w", err)
	}
	found := map[string]fileKey{}
	for _, f := range files {
		// Container names have no dots, pod names may: cut the base only.
		dir, name := filepath.Split(f)
		if i := strings.Index(name, ".log."); i >= 0 {
			name = name[:i+len(".log")] // a rotated file: look at its log
		} else if !strings.HasSuffix(name, ".log") {
			continue
		}
		path := filepath.Join(dir, name)
		if _, ok := found[path]; ok {
			continue
		}
		info, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			found[path] = fileKey{missing: true}
		case err != nil:
			return nil, fmt.Errorf("reading container log: %w", err)
		case info.Size() > maxBytes:
			found[path] = fileKey{size: info.Size(), modTime: info.ModTime()}
		}
	}
	idle := make(map[string]fileKey, len(s.idle))
	for path, key := range found {
		if prev, ok := s.idle[path]; ok && prev == key {
			idle[path] = key
			delete(found, path)
		}
	}
	s.idle = idle // forget logs that changed or went away
	return found, nil
}
