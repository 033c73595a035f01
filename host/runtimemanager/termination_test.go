package runtimemanager

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/podhost/podhost/host/runtimemanager/crilog"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// criLine is one CRI log entry.
func criLine(stream, tag, text string) string {
	return "2030-01-01T00:00:00.000000001Z " + stream + " " + tag + " " + text + "\n"
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTerminationMessageFileIsCutToItsLast4096Bytes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "0")
	long := strings.Repeat("a", 1000) + strings.Repeat("b", 4096)
	writeFile(t, file, long)
	if got := terminationMessage(file, false, ""); got != strings.Repeat("b", 4096) {
		t.Errorf("message of a %d-byte file: %d bytes, starting %q; want the last 4096 bytes", len(long), len(got), got[:10])
	}
	writeFile(t, file, "short\n")
	if got := terminationMessage(file, true, filepath.Join(dir, "no.log")); got != "short\n" {
		t.Errorf("message %q, want the whole short file", got)
	}
}

func TestTerminationMessageFallsBackToTheLogOnlyWhenTheFileIsEmpty(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "0.log")
	writeFile(t, log, criLine("stdout", "F", "out")+criLine("stderr", "F", "err"))
	empty := filepath.Join(dir, "empty")
	writeFile(t, empty, "")
	full := filepath.Join(dir, "full")
	writeFile(t, full, "from file")
	for _, tc := range []struct {
		name     string
		file     string
		fallback bool
		want     string
	}{
		{"empty file, fallback", empty, true, "out\nerr\n"},
		{"missing file, fallback", filepath.Join(dir, "missing"), true, "out\nerr\n"},
		{"written file, fallback", full, true, "from file"},
		{"empty file, no fallback", empty, false, ""},
		{"missing file, no fallback", filepath.Join(dir, "missing"), false, ""},
	} {
		if got := terminationMessage(tc.file, tc.fallback, log); got != tc.want {
			t.Errorf("%s: message %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := terminationMessage(empty, true, filepath.Join(dir, "missing.log")); !strings.Contains(got, "reading the termination message from the log") {
		t.Errorf("fallback to a missing log: message %q, want the error", got)
	}
}

func TestFallbackOnlyOnFailureUnderItsPolicy(t *testing.T) {
	fallback := string(v1.TerminationMessageFallbackToLogsOnError)
	for _, tc := range []struct {
		policy string
		code   int32
		reason string
		want   bool
	}{
		{fallback, 1, "Error", true},
		{fallback, 137, "OOMKilled", true},
		{fallback, 0, "Completed", false},
		{fallback, 128, reasonContainerCannotRun, false},
		{string(v1.TerminationMessageReadFile), 1, "Error", false},
		{"", 1, "Error", false},
	} {
		if got := fallsBackToLogs(tc.policy, tc.code, tc.reason); got != tc.want {
			t.Errorf("fallsBackToLogs(%q, %d, %q) = %v, want %v", tc.policy, tc.code, tc.reason, got, tc.want)
		}
	}
}

func TestLogTailIsTheLast80LinesAndAtMost2048Bytes(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 100 {
		b.WriteString(criLine("stdout", "F", fmt.Sprintf("line %d", i)))
	}
	log := filepath.Join(dir, "lines.log")
	writeFile(t, log, b.String())
	got, err := logTail(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 80 || lines[0] != "line 20" || lines[79] != "line 99" {
		t.Errorf("tail of 100 short lines: %d lines from %q to %q, want 80 from \"line 20\" to \"line 99\"", len(lines), lines[0], lines[len(lines)-1])
	}

	b.Reset()
	for i := range 10 {
		b.WriteString(criLine("stderr", "F", strings.Repeat(string(rune('a'+i)), 500)))
	}
	writeFile(t, log, b.String())
	if got, _ = logTail(log); len(got) != 2048 || !strings.HasSuffix(got, strings.Repeat("j", 500)+"\n") {
		t.Errorf("tail of 10 long lines: %d bytes ending %q, want the last 2048", len(got), got[max(len(got)-20, 0):])
	}

	// Partial entries join; a malformed line gives nothing; the earliest
	// text is found behind more than the first window's worth of junk.
	junk := strings.Repeat("x", 1000) + "\n"
	writeFile(t, log, criLine("stdout", "F", "first")+strings.Repeat(junk, 60)+criLine("stdout", "P", "par")+criLine("stdout", "F", "tial"))
	if got, _ = logTail(log); got != "first\npartial\n" {
		t.Errorf("tail %q, want %q", got, "first\npartial\n")
	}
}

// TestLogTailReadsAsMuchAsTheWholeFileWould checks the windowed reading
// against the rule applied to the whole file.
func TestLogTailReadsAsMuchAsTheWholeFileWould(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		n := rapid.IntRange(0, 200).Draw(t, "entries")
		for i := range n {
			text := strings.Repeat(string(rune('a'+i%26)), rapid.IntRange(0, 3000).Draw(t, "len"))
			switch rapid.IntRange(0, 9).Draw(t, "kind") {
			case 0:
				b.WriteString(text + "\n") // malformed
			case 1, 2:
				b.WriteString(criLine("stderr", "P", text))
			default:
				b.WriteString(criLine("stdout", "F", text))
			}
		}
		log := filepath.Join(dir, "r.log")
		if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := logTail(log)
		if err != nil {
			t.Fatal(err)
		}
		if want := wholeFileTail(b.String()); got != want {
			t.Fatalf("logTail gave %d bytes, the whole file's rule %d", len(got), len(want))
		}
	})
}

// wholeFileTail is the rule on the whole log: the text of its last 80
// entries, its last 2048 bytes.
func wholeFileTail(log string) string {
	lines := strings.SplitAfter(log, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	lines = lines[max(len(lines)-80, 0):]
	var text bytes.Buffer
	for _, l := range lines {
		e, err := crilog.ParseLine([]byte(l))
		if err != nil {
			continue
		}
		text.Write(e.Text)
		if !e.Partial {
			text.WriteByte('\n')
		}
	}
	s := text.String()
	return s[max(len(s)-2048, 0):]
}

func TestTerminationMessageFileStaysInThePodDirectory(t *testing.T) {
	for _, tc := range []struct {
		uid       types.UID
		container string
	}{
		{"../etc", "c"}, {"..", "c"}, {"", "c"}, {"a/b", "c"}, {"uid", "../c"}, {"uid", ".."}, {"uid", "a/b"}, {"uid", ""},
	} {
		if p, err := terminationMessageFile("/root", tc.uid, tc.container, 0); err == nil {
			t.Errorf("uid %q container %q: file %s, want an error", tc.uid, tc.container, p)
		}
	}
	if p, err := terminationMessageFile("/root", "uid-1", "app", 3); err != nil || p != "/root/pods/uid-1/containers/app/3" {
		t.Errorf("file %q, %v; want /root/pods/uid-1/containers/app/3", p, err)
	}
}

// terminationPod is a pod of one container with a termination message
// path and policy.
func terminationPod(name, path string, policy v1.TerminationMessagePolicy) *v1.Pod {
	pod := withPolicy(newPod(name, "app"), v1.RestartPolicyNever)
	pod.Spec.Containers[0].TerminationMessagePath = path
	pod.Spec.Containers[0].TerminationMessagePolicy = policy
	return pod
}

// lastMounts returns the termination message mounts (those of a file
// under the pod's containers directory) of the last CreateContainer call.
func (e *env) lastMounts() []*runtimev1.Mount {
	e.t.Helper()
	var mounts []*runtimev1.Mount
	for _, c := range e.fake.Calls() {
		if c.Method != "CreateContainer" {
			continue
		}
		mounts = nil
		for _, m := range c.Req.(*runtimev1.CreateContainerRequest).GetConfig().GetMounts() {
			if strings.HasPrefix(m.GetHostPath(), filepath.Join(e.root, "pods")+"/") && filepath.Base(filepath.Dir(filepath.Dir(m.GetHostPath()))) == "containers" {
				mounts = append(mounts, m)
			}
		}
	}
	return mounts
}

func TestContainerGetsAnEmptyWritableTerminationMessageFile(t *testing.T) {
	e := newEnv(t)
	pod := terminationPod("msg", "/dev/termination-log", v1.TerminationMessageReadFile)
	e.mustSync(pod)
	mounts := e.lastMounts()
	if len(mounts) != 1 || mounts[0].GetContainerPath() != "/dev/termination-log" || mounts[0].GetReadonly() {
		t.Fatalf("mounts %v, want one writable at /dev/termination-log", mounts)
	}
	file := mounts[0].GetHostPath()
	if want := filepath.Join(e.root, "pods", string(pod.UID), "containers", "app", "0"); file != want {
		t.Errorf("host file %s, want %s", file, want)
	}
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != 0 || info.Mode().Perm() != 0o666 {
		t.Errorf("file size %d mode %v, want empty and -rw-rw-rw-", info.Size(), info.Mode())
	}

	// The container writes its message and exits.
	writeFile(t, file, "DONE")
	e.exit(pod, "app", 0)
	if got := e.container(pod, "app").Message; got != "DONE" {
		t.Errorf("message %q, want DONE", got)
	}

	// Its files go with the pod.
	if err := e.m.KillPod(t.Context(), pod, nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.m.RemovePod(t.Context(), pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", string(pod.UID))); !os.IsNotExist(err) {
		t.Errorf("pod directory after RemovePod: %v, want gone", err)
	}
}

func TestNoTerminationMessageFileWithoutAPath(t *testing.T) {
	e := newEnv(t)
	pod := terminationPod("nopath", "", "")
	e.mustSync(pod)
	if mounts := e.lastMounts(); len(mounts) != 0 {
		t.Errorf("mounts %v, want none", mounts)
	}
}

func TestTerminationMessageFromTheLogOnFailure(t *testing.T) {
	for _, tc := range []struct {
		code int32
		want string
	}{
		{1, "DONE\n"},
		{0, ""},
	} {
		e := newEnv(t)
		pod := terminationPod("fallback", "/dev/termination-log", v1.TerminationMessageFallbackToLogsOnError)
		e.mustSync(pod)
		writeFile(t, filepath.Join(PodLogDir(e.root, pod.Namespace, pod.Name, pod.UID), ContainerLogPath("app", 0)), criLine("stdout", "F", "DONE"))
		e.exit(pod, "app", tc.code)
		if got := e.container(pod, "app").Message; got != tc.want {
			t.Errorf("exit %d: message %q, want %q", tc.code, got, tc.want)
		}
	}
}

func TestPrunedContainerTakesItsTerminationMessageFile(t *testing.T) {
	e := newEnv(t)
	pod := withPolicy(terminationPod("prune", "/dev/termination-log", v1.TerminationMessageReadFile), v1.RestartPolicyAlways)
	var files []string
	for range 3 {
		e.mustSync(pod)
		files = append(files, e.lastMounts()[0].GetHostPath())
		e.exit(pod, "app", 1)
		e.clock.Step(10 * time.Minute) // past any back-off
	}
	if err := e.m.GarbageCollect(t.Context(), func(types.UID) bool { return false }); err != nil {
		t.Fatal(err)
	}
	// The newest container, also the newest dead one, is kept.
	for _, f := range files[:2] {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("file %s of a pruned container: %v, want gone", f, err)
		}
	}
	if _, err := os.Stat(files[2]); err != nil {
		t.Errorf("file of the kept container: %v", err)
	}
}

// TestRestartedContainerKeepsEachAttemptsMessage: a restarted container
// writes a fresh file, and its previous instance (the status'
// lastTerminationState) keeps its own message.
func TestRestartedContainerKeepsEachAttemptsMessage(t *testing.T) {
	e := newEnv(t)
	pod := withPolicy(terminationPod("restart", "/dev/termination-log", v1.TerminationMessageReadFile), v1.RestartPolicyAlways)
	for _, msg := range []string{"first", "second"} {
		e.mustSync(pod)
		file := e.lastMounts()[0].GetHostPath()
		if info, err := os.Stat(file); err != nil || info.Size() != 0 {
			t.Fatalf("file of the new instance: %v, %v; want it empty", info, err)
		}
		writeFile(t, file, msg)
		e.exit(pod, "app", 1)
		e.clock.Step(10 * time.Minute) // past any back-off
	}
	var got []string
	for _, c := range e.status(pod).ContainerStatuses {
		got = append(got, fmt.Sprintf("%d:%s", c.RestartCount, c.Message))
	}
	if strings.Join(got, " ") != "1:second 0:first" {
		t.Errorf("messages (restart count:message, newest first) %q, want [1:second 0:first]", got)
	}
}
