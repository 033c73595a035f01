package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// talkerScript prints an instance id and five lines, then crashes after a
// while, so that the pod restarts and has a previous instance.
const talkerScript = `echo "id $(cat /proc/sys/kernel/random/uuid)"; for i in 1 2 3 4 5; do echo "line $i"; done; sleep 8; exit 1`

// TestCLILogs runs `podhost logs` with kubectl's flags against a real host
// whose container has restarted: --previous reads the instance before,
// --tail, --timestamps, --since and --since-time select lines, and --tail
// with -f prints the tail and follows until the container exits.
func TestCLILogs(t *testing.T) {
	h := startPodHost(t)
	h.apply(busyPod("talker", v1.RestartPolicyAlways, sh("app", talkerScript)))
	h.waitPod("talker", 90*time.Second, "running", running)
	if _, err := h.hostCLI(t.Context(), "logs", "default/talker", "--previous"); err == nil || !strings.Contains(err.Error(), "no previous instance") {
		if p, ok := h.get("talker"); ok && containerStatus(p, "app").RestartCount == 0 {
			t.Errorf("logs --previous of a container that never restarted: %v; want a not-found error", err)
		}
	}

	h.waitPod("talker", 90*time.Second, "restarted once and running", func(p *v1.Pod) bool {
		st := containerStatus(p, "app")
		return st != nil && st.RestartCount >= 1 && st.State.Running != nil
	})
	// The checks are about one instance: they are run again when the
	// container restarted meanwhile.
	for try := 1; ; try++ {
		before := h.logInstance(t)
		out := map[string]string{}
		for name, args := range map[string][]string{
			"previous":     {"--previous"},
			"tail":         {"--tail", "2"},
			"timestamps":   {"--timestamps", "--tail", "3"},
			"since":        {"--since", "1h"},
			"future":       {"--since-time", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
			"tail follows": {"--tail", "1", "-f"},
		} {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			o, err := h.hostCLI(ctx, append([]string{"logs", "default/talker"}, args...)...)
			cancel()
			if err != nil {
				t.Fatalf("logs %s: %v", strings.Join(args, " "), err)
			}
			out[name] = o
		}
		ts, text := splitTimestamps(t, out["timestamps"])
		since, err := h.hostCLI(t.Context(), "logs", "default/talker", "--since-time", ts[1])
		if err != nil {
			t.Fatal(err)
		}
		if after := h.logInstance(t); after != before && try < 3 {
			t.Logf("container restarted during the checks (%s, then %s); again", before, after)
			continue
		}
		for _, c := range []struct {
			name, got, want string
		}{
			{"--tail 2", out["tail"], "line 4\nline 5\n"},
			{"--timestamps --tail 3 (text)", text, "line 3\nline 4\nline 5\n"},
			{"--since-time of line 4", since, "line 4\nline 5\n"},
			{"--since-time in the future", out["future"], ""},
			{"--since 1h", out["since"], before + "\nline 1\nline 2\nline 3\nline 4\nline 5\n"},
			{"--tail 1 -f until the container exits", out["tail follows"], "line 5\n"},
		} {
			if c.got != c.want {
				t.Errorf("logs %s = %q; want %q", c.name, c.got, c.want)
			}
		}
		prevID, _, _ := strings.Cut(out["previous"], "\n")
		if !strings.HasPrefix(prevID, "id ") || prevID == before || !strings.Contains(out["previous"], "line 5") {
			t.Errorf("logs --previous = %q; want another instance than %q", out["previous"], before)
		}
		return
	}
}

// logInstance is the first line of the current log: "id <uuid>".
func (h *podHost) logInstance(t *testing.T) string {
	t.Helper()
	var first string
	poll(t, 30*time.Second, func() bool {
		out, err := h.hostCLI(t.Context(), "logs", "default/talker")
		first, _, _ = strings.Cut(out, "\n")
		return err == nil && strings.Contains(out, "line 5")
	}, func() string { return "the current instance has not printed its lines: " + first })
	return first
}

// splitTimestamps splits --timestamps output into the times, each checked
// to be RFC 3339, and the text.
func splitTimestamps(t *testing.T, out string) ([]string, string) {
	t.Helper()
	var times []string
	var text strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if line == "" {
			continue
		}
		ts, rest, ok := strings.Cut(line, " ")
		if _, err := time.Parse(time.RFC3339Nano, ts); !ok || err != nil {
			t.Fatalf("logs --timestamps line %q does not start with an RFC 3339 time", line)
		}
		times = append(times, ts)
		text.WriteString(rest)
	}
	if len(times) < 2 {
		t.Fatalf("logs --timestamps: %s", fmt.Sprint(times))
	}
	return times, text.String()
}
