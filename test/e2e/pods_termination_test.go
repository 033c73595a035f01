package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestTerminationMessage runs containers that leave a termination message
// the ways the kubelet reads one, and reads each from the pod's status:
// written to the default path, to a custom path, by a non-root user, and
// under FallbackToLogsOnError from the log of a failed container (not of
// one that succeeded, and not when the file was written). The files go
// with the pod.
func TestTerminationMessage(t *testing.T) {
	h := startPodHost(t)
	fallback := func(c v1.Container) v1.Container {
		c.TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
		return c
	}
	custom := sh("custom", "printf CUSTOM > /tmp/message")
	custom.TerminationMessagePath = "/tmp/message"
	nonRoot := sh("non-root", "test $(id -u) = 1000 && printf NONROOT > /dev/termination-custom-log")
	nonRoot.TerminationMessagePath = "/dev/termination-custom-log"
	nonRoot.SecurityContext = &v1.SecurityContext{RunAsUser: ptr.To[int64](1000)}
	pod := busyPod("termmsg", v1.RestartPolicyNever,
		sh("default", "printf DONE > /dev/termination-log"),
		custom,
		nonRoot,
		fallback(sh("log-failed", "echo -n DONE; exit 1")),
		fallback(sh("log-succeeded", "echo -n DONE; exit 0")),
		fallback(sh("file-failed", "printf FILE > /dev/termination-log; echo LOG; exit 2")),
	)
	h.apply(pod)
	p := h.waitPhase("termmsg", v1.PodFailed, 90*time.Second)

	for name, want := range map[string]struct {
		code int32
		msg  string
	}{
		"default":       {0, "DONE"},
		"custom":        {0, "CUSTOM"},
		"non-root":      {0, "NONROOT"},
		"log-failed":    {1, "DONE"},
		"log-succeeded": {0, ""},
		"file-failed":   {2, "FILE"},
	} {
		cs := containerStatus(p, name)
		if cs == nil || cs.State.Terminated == nil {
			t.Errorf("container %s: status %+v, want terminated", name, cs)
			continue
		}
		if term := cs.State.Terminated; term.ExitCode != want.code || term.Message != want.msg {
			t.Errorf("container %s: exit %d message %q, want exit %d message %q", name, term.ExitCode, term.Message, want.code, want.msg)
		}
	}

	dir := filepath.Join(h.root, "pods", string(p.UID), "containers")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("termination message files of the finished pod: %v", err)
	}
	h.delete("termmsg", nil)
	h.waitGone("termmsg", 60*time.Second)
	var err error
	poll(t, 60*time.Second, func() bool {
		_, err = os.Stat(dir)
		return errors.Is(err, fs.ErrNotExist)
	}, func() string {
		return "termination message files of the deleted pod: stat gave " + errString(err) + "\n" + h.logTail()
	})
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
