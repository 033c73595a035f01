package runtimemanager

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// ErrNoLog: no log file was found for the container.
var ErrNoLog = errors.New("no log found")

// PodLogDir is the log directory of a pod: <root>/pods/<namespace>_<name>_<uid>.
// Namespaces and names cannot contain "_", so the parts stay apart.
func PodLogDir(root, namespace, name string, uid types.UID) string {
	return filepath.Join(root, "pods", namespace+"_"+name+"_"+string(uid))
}

// ContainerLogPath is a container's log path relative to its pod's log
// directory: <container>/<restartCount>.log.
func ContainerLogPath(container string, restartCount uint32) string {
	return filepath.Join(container, strconv.FormatUint(uint64(restartCount), 10)+".log")
}

// logFile is one log file found on disk.
type logFile struct {
	path    string
	attempt uint64
	modTime int64
}

// FindLog returns the newest log file of a container of the pod
// namespace/name: the most recently written one over every pod UID that
// had that name (the highest restart count on a tie). An empty container
// is allowed when the pod has exactly one container with logs. It wraps
// ErrNoLog when there is none, naming the containers that have logs.
func FindLog(root, namespace, name, container string) (string, error) {
	files, err := findLogs(root, namespace, name, container)
	if err != nil {
		return "", err
	}
	return files[len(files)-1].path, nil
}

// FindPreviousLog is FindLog for the log before the newest one: that of
// the container's previous instance. It wraps ErrNoLog when there is none.
func FindPreviousLog(root, namespace, name, container string) (string, error) {
	files, err := findLogs(root, namespace, name, container)
	if err != nil {
		return "", err
	}
	if len(files) < 2 {
		return "", fmt.Errorf("no previous instance of container %q of pod %s/%s: %w", container, namespace, name, ErrNoLog)
	}
	return files[len(files)-2].path, nil
}

// findLogs returns the container's log files, oldest first.
func findLogs(root, namespace, name, container string) ([]logFile, error) {
	pods, err := filepath.Glob(filepath.Join(root, "pods", namespace+"_"+name+"_*"))
	if err != nil {
		return nil, fmt.Errorf("finding logs of %s/%s: %w", namespace, name, err)
	}
	names := map[string]bool{}
	var files []logFile
	for _, dir := range pods {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			names[e.Name()] = true
			if container != "" && e.Name() != container {
				continue
			}
			files = append(files, logFiles(filepath.Join(dir, e.Name()))...)
		}
	}
	if container == "" && len(names) > 1 {
		return nil, fmt.Errorf("pod %s/%s has several containers, choose one of %s: %w", namespace, name, strings.Join(slices.Sorted(maps.Keys(names)), ", "), ErrNoLog)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("container %q of pod %s/%s (containers with logs: %s): %w", container, namespace, name, strings.Join(slices.Sorted(maps.Keys(names)), ", "), ErrNoLog)
	}
	slices.SortFunc(files, func(a, b logFile) int {
		if a.modTime != b.modTime {
			return cmp.Compare(a.modTime, b.modTime)
		}
		return cmp.Compare(a.attempt, b.attempt)
	})
	return files, nil
}

func logFiles(dir string) []logFile {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []logFile
	for _, e := range entries {
		n, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || e.IsDir() {
			continue
		}
		attempt, err := strconv.ParseUint(n, 10, 32)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, logFile{path: filepath.Join(dir, e.Name()), attempt: attempt, modTime: info.ModTime().UnixNano()})
	}
	return out
}
