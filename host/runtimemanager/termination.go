package runtimemanager

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/runtimemanager/crilog"
	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// The kubelet's limits of a termination message.
const (
	// terminationFileBytes: of the file a container writes, its last
	// 4096 bytes are the message.
	terminationFileBytes = 4 * 1024
	// terminationLogLines and terminationLogBytes: the log fallback is the
	// last 2048 bytes of the text of the log's last 80 entries.
	terminationLogLines = 80
	terminationLogBytes = 2 * 1024
	// terminationLogWindow bounds how much of a log file's end is read
	// for the fallback.
	terminationLogWindow = 2 << 20
)

// reasonContainerCannotRun is the reason of a container that could not
// even start: it has no log to fall back on (the kubelet's rule).
const reasonContainerCannotRun = "ContainerCannotRun"

// podContainersDir is the directory of a pod's termination message files,
// <root>/pods/<uid>/containers (the kubelet's layout, beside the volume
// manager's <root>/pods/<uid>/volumes). The UID comes from the pod or from
// a runtime label: it must be one plain path element.
func podContainersDir(root string, uid types.UID) (string, error) {
	dir, err := podFilesDir(root, uid)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "containers"), nil
}

// podFilesDir is the directory of the files the manager makes for a pod
// (its termination messages, its /etc/hosts), <root>/pods/<uid> as the
// kubelet's pod directory. The UID comes from the pod or from a runtime
// label: it must be one plain path element.
func podFilesDir(root string, uid types.UID) (string, error) {
	if !plainElement(string(uid)) {
		return "", fmt.Errorf("pod uid %q is not a plain file name", uid)
	}
	return filepath.Join(root, "pods", string(uid)), nil
}

// terminationMessageFile is the host file bind-mounted at a container's
// terminationMessagePath: <root>/pods/<uid>/containers/<container>/<attempt>.
// One file per attempt, like the log file, so a restarted container starts
// empty and the previous instance's message stays readable.
func terminationMessageFile(root string, uid types.UID, container string, attempt uint32) (string, error) {
	dir, err := podContainersDir(root, uid)
	if err != nil {
		return "", err
	}
	if !plainElement(container) {
		return "", fmt.Errorf("container name %q is not a plain file name", container)
	}
	return filepath.Join(dir, container, strconv.FormatUint(uint64(attempt), 10)), nil
}

// plainElement reports a non-empty file name that stays in its directory.
func plainElement(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`+"\x00")
}

// terminationMessageMount creates the container's termination message
// file empty, writable by any user the container may run as (mode 0666,
// as the kubelet makes it), and returns its bind mount at the spec's
// terminationMessagePath. A container without a path gets none.
func (m *Manager) terminationMessageMount(pod *v1.Pod, spec *v1.Container, attempt uint32) (*runtimev1.Mount, error) {
	if spec.TerminationMessagePath == "" {
		return nil, nil
	}
	if !filepath.IsAbs(spec.TerminationMessagePath) {
		return nil, fmt.Errorf("terminationMessagePath %q is not absolute", spec.TerminationMessagePath)
	}
	path, err := terminationMessageFile(m.logRoot, pod.UID, spec.Name, attempt)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("creating termination message directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return nil, fmt.Errorf("creating termination message file: %w", err)
	}
	// The umask narrowed the mode of a new file; an old one keeps its own.
	err = f.Chmod(0o666)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("creating termination message file: %w", err)
	}
	return &runtimev1.Mount{ContainerPath: spec.TerminationMessagePath, HostPath: path}, nil
}

// terminationMessage is what an exited container adds to its status'
// message, as the kubelet reads it: the last 4096 bytes of its termination
// message file; with fallbackToLogs (the policy FallbackToLogsOnError, a
// non-zero exit code and a container that could run) and an empty or
// missing file, the end of its log (logTail). A file that cannot be read
// gives a message saying so.
func terminationMessage(file string, fallbackToLogs bool, logPath string) string {
	data, err := readLast(file, terminationFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Sprintf("reading the termination message file %s: %v", file, err)
	case len(data) > 0:
		return string(data)
	}
	if !fallbackToLogs {
		return ""
	}
	msg, err := logTail(logPath)
	if err != nil {
		return fmt.Sprintf("reading the termination message from the log: %v", err)
	}
	return msg
}

// readLast reads at most max bytes from the end of the file, not
// following a symbolic link.
func readLast(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	off := max(info.Size()-limit, 0)
	return io.ReadAll(io.NewSectionReader(f, off, limit))
}

// logTail is the termination message a CRI log gives: the text of its
// last 80 entries (a partial entry joined with the next, a full one ending
// its line; stdout and stderr alike; malformed entries count and give no
// text), cut to its last 2048 bytes. It reads the file's end in growing
// windows until they hold 80 entries, or enough text, or the whole file.
func logTail(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := info.Size()
	for window := int64(16 << 10); ; window *= 2 {
		off := max(size-window, 0)
		buf := make([]byte, size-off)
		if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("reading log: %w", err)
		}
		text, complete := tailText(buf, off == 0)
		if complete || off == 0 || window >= terminationLogWindow {
			return string(text), nil
		}
	}
}

// tailText is logTail over the end of a log: whole says buf starts at the
// file's start (else its first line may be cut and is dropped). complete
// reports that earlier bytes cannot change the result.
func tailText(buf []byte, whole bool) (text []byte, complete bool) {
	lines := bytes.SplitAfter(buf, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if !whole && len(lines) > 0 {
		lines = lines[1:]
	}
	if len(lines) >= terminationLogLines {
		lines, complete = lines[len(lines)-terminationLogLines:], true
	}
	for _, line := range lines {
		e, err := crilog.ParseLine(line)
		if err != nil {
			continue
		}
		text = append(text, e.Text...)
		if !e.Partial {
			text = append(text, '\n')
		}
	}
	if len(text) >= terminationLogBytes {
		text, complete = text[len(text)-terminationLogBytes:], true
	}
	return text, complete
}

// readTerminationMessages reads the termination message of the pod's
// exited containers (terminationMessage) for its status.
func (m *Manager) readTerminationMessages(s *podState) {
	for i := range s.containers {
		c := &s.containers[i]
		if c.state != lifecycle.ContainerExited || c.startCut {
			continue
		}
		file, err := terminationMessageFile(m.logRoot, s.uid, c.name, c.restartCount)
		if err != nil {
			c.termination = err.Error()
			continue
		}
		fallback := fallsBackToLogs(c.messagePolicy, c.exitCode, c.reason)
		logPath := ""
		if s.name != "" && plainElement(s.namespace+"_"+s.name+"_"+string(s.uid)) {
			logPath = filepath.Join(PodLogDir(m.logRoot, s.namespace, s.name, s.uid), ContainerLogPath(c.name, c.restartCount))
		}
		c.termination = terminationMessage(file, fallback, logPath)
	}
}

// fallsBackToLogs says whether an exited container's empty termination
// message file gives way to its log: only under the policy
// FallbackToLogsOnError, for a container that failed (non-zero exit code)
// after it could run.
func fallsBackToLogs(policy string, exitCode int32, reason string) bool {
	return policy == string(v1.TerminationMessageFallbackToLogsOnError) && exitCode != 0 && reason != reasonContainerCannotRun
}

// RemovePodFiles removes the files the manager made for a pod (its
// termination messages and /etc/hosts) and the pod directory when that
// leaves it empty (the volume manager removes it otherwise, once its
// volumes are gone). A UID no file can be made for has none. RemovePod
// does it too; the host calls it as soon as a deleted pod's final status
// is written and its volumes are gone, so that the pod's directory is
// gone when the pod is, not once its containers are removed in the
// background.
func (m *Manager) RemovePodFiles(uid types.UID) error { return m.removePodFiles(uid) }

func (m *Manager) removePodFiles(uid types.UID) error {
	dir, err := podFilesDir(m.logRoot, uid)
	if err != nil {
		return nil // none was made for it
	}
	if err := os.RemoveAll(filepath.Join(dir, "containers")); err != nil {
		return fmt.Errorf("removing termination messages: %w", err)
	}
	if err := os.Remove(filepath.Join(dir, etcHostsFileName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the pod's hosts file: %w", err)
	}
	_ = os.Remove(dir) // fails while volumes are left: theirs to remove
	return nil
}

// removeTerminationMessage removes the termination message file of one
// container; a missing one (or a name no file can be made for) is
// success.
func (m *Manager) removeTerminationMessage(uid types.UID, container string, attempt uint32) error {
	file, err := terminationMessageFile(m.logRoot, uid, container, attempt)
	if err != nil {
		return nil // none was made for it
	}
	if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing termination message: %w", err)
	}
	return nil
}
