package e2e

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// freePort returns a TCP port of the host that nothing listens on now.
func freePort(t *testing.T) int32 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

// podCondition returns the status of the pod's condition of type typ.
func podCondition(p *v1.Pod, typ v1.PodConditionType) v1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// findPodCondition returns the pod's condition of type typ, or a zero
// condition.
func findPodCondition(p *v1.Pod, typ v1.PodConditionType) v1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return v1.PodCondition{}
}

// execCmd is an exec handler of a shell script.
func execCmd(script string) *v1.ExecAction {
	return &v1.ExecAction{Command: []string{"sh", "-c", script}}
}

// containsLine reports whether some line of out, trimmed, ends with want
// after an optional "- " list marker.
func containsLine(out, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "- ")
		if l == want {
			return true
		}
	}
	return false
}

// labeledMetric reads the sample of a metric whose labels include every
// one of labels from GET /metrics.
func (h *podHost) labeledMetric(name string, labels map[string]string) (float64, error) {
	resp, err := h.scrape()
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
lines:
	for _, l := range strings.Split(string(body), "\n") {
		rest, ok := strings.CutPrefix(l, name+"{")
		if !ok {
			continue
		}
		set, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		for k, v := range labels {
			if !strings.Contains(","+set+",", ","+k+"="+strconv.Quote(v)+",") {
				continue lines
			}
		}
		return strconv.ParseFloat(strings.TrimSpace(value), 64)
	}
	return 0, fmt.Errorf("no %s%v in /metrics", name, labels)
}
