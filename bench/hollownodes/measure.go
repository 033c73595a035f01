package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// result is what one run measured.
type result struct {
	registered, running time.Duration
	hostRSS, pluginRSS  []float64 // MiB per node
	requests            float64   // API requests in the rest window
	byKind              map[string]float64
	window              time.Duration
	problems            []string
}

func (f *fleet) measure(ctx context.Context, o options) (*result, error) {
	r := &result{}
	start := time.Now()
	if err := f.waitFor(ctx, 3*time.Minute, "every node Ready", f.allReady); err != nil {
		return nil, err
	}
	r.registered = time.Since(start)
	fmt.Fprintf(os.Stderr, "%d nodes Ready in %s\n", o.nodes, r.registered.Round(time.Millisecond))
	start = time.Now()
	for _, h := range f.nodes {
		for j := 0; j < o.pods; j++ {
			if _, err := f.cluster.Client.CoreV1().Pods("default").Create(ctx, hollowPod(h.name, j), metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("creating a pod on %s: %w", h.name, err)
			}
		}
	}
	want := o.nodes * o.pods
	if err := f.waitFor(ctx, 5*time.Minute, fmt.Sprintf("%d pods Running with a pod IP", want), func(ctx context.Context) (bool, string) {
		return f.allRunning(ctx, want)
	}); err != nil {
		return nil, err
	}
	r.running = time.Since(start)
	fmt.Fprintf(os.Stderr, "%d pods Running in %s; at rest for %s\n", want, r.running.Round(time.Millisecond), o.rest)

	leasesBefore, err := f.renewTimes(ctx)
	if err != nil {
		return nil, err
	}
	before, beforeKinds, err := f.requestCount(ctx)
	if err != nil {
		return nil, err
	}
	restStart := time.Now()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(o.rest):
	}
	after, afterKinds, err := f.requestCount(ctx)
	if err != nil {
		return nil, err
	}
	r.window = time.Since(restStart)
	r.requests = after - before
	r.byKind = map[string]float64{}
	for k, v := range afterKinds {
		if d := v - beforeKinds[k]; d > 0 {
			r.byKind[k] = d
		}
	}
	leasesAfter, err := f.renewTimes(ctx)
	if err != nil {
		return nil, err
	}
	for name, t := range leasesBefore {
		if !leasesAfter[name].After(t) {
			r.problems = append(r.problems, fmt.Sprintf("lease of %s not renewed at rest", name))
		}
	}
	if ok, why := f.allReady(ctx); !ok {
		r.problems = append(r.problems, "after the rest window: "+why)
	}
	if ok, why := f.allRunning(ctx, want); !ok {
		r.problems = append(r.problems, "after the rest window: "+why)
	}
	for _, h := range f.nodes {
		host, plugin, err := rssOf(h.cmd.Process.Pid)
		if err != nil {
			r.problems = append(r.problems, fmt.Sprintf("%s: %v", h.name, err))
			continue
		}
		r.hostRSS, r.pluginRSS = append(r.hostRSS, host), append(r.pluginRSS, plugin)
	}
	return r, nil
}

func hollowPod(node string, i int) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-pod-%02d", node, i), Namespace: "default"},
		Spec: v1.PodSpec{
			NodeName: node, HostNetwork: true, AutomountServiceAccountToken: ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			Containers:                    []v1.Container{{Name: "app", Image: "podhost.local/busybox:1", Command: []string{"sleep", "3600"}}},
		},
	}
}

func (f *fleet) waitFor(ctx context.Context, limit time.Duration, what string, cond func(context.Context) (bool, string)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, why := cond(ctx)
		if ok {
			return nil
		}
		for _, h := range f.nodes {
			if h.cmd.ProcessState != nil {
				return fmt.Errorf("node %s exited; its log %s", h.name, h.log)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not %s after %s: %s", what, limit, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (f *fleet) allReady(ctx context.Context) (bool, string) {
	nodes, err := f.cluster.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
				ready++
			}
		}
	}
	return ready == len(f.nodes), fmt.Sprintf("%d of %d nodes Ready", ready, len(f.nodes))
}

func (f *fleet) allRunning(ctx context.Context, want int) (bool, string) {
	pods, err := f.cluster.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == v1.PodRunning && p.Status.PodIP != "" {
			running++
		}
	}
	return running == want, fmt.Sprintf("%d of %d pods Running", running, want)
}

func (f *fleet) renewTimes(ctx context.Context) (map[string]time.Time, error) {
	leases, err := f.cluster.Client.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	for _, l := range leases.Items {
		if l.Spec.RenewTime != nil {
			out[l.Name] = l.Spec.RenewTime.Time
		}
	}
	return out, nil
}

// requestCount sums apiserver_request_total over every label set, and by
// verb and resource.
func (f *fleet) requestCount(ctx context.Context) (float64, map[string]float64, error) {
	body, err := f.cluster.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	return sumMetric(bytes.NewReader(body), "apiserver_request_total")
}

// sumMetric sums a counter over its label sets, in all and by the values
// of its verb, resource and subresource labels.
func sumMetric(r io.Reader, name string) (float64, map[string]float64, error) {
	var sum float64
	kinds := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, nil, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
		kinds[label(line, "verb")+" "+label(line, "resource")+subresource(line)] += v
	}
	return sum, kinds, sc.Err()
}

func label(line, name string) string {
	_, rest, ok := strings.Cut(line, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

func subresource(line string) string {
	if s := label(line, "subresource"); s != "" {
		return "/" + s
	}
	return ""
}

// rssOf returns the VmRSS in MiB of the host process pid and of its
// runtime-memory child.
func rssOf(pid int) (host, plugin float64, err error) {
	if host, err = vmRSS(pid); err != nil {
		return 0, 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		fields := strings.Fields(string(rest))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) && bytes.Contains(stat, []byte("runtime-memory")) {
			plugin, err = vmRSS(child)
			return host, plugin, err
		}
	}
	return host, 0, fmt.Errorf("no runtime-memory process under pid %d", pid)
}

func vmRSS(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func (r *result) print(w io.Writer, o options) {
	perNodeMin := r.requests / float64(o.nodes) / r.window.Minutes()
	fmt.Fprintf(w, "| %d hollow nodes × %d pods | value |\n|---|---|\n", o.nodes, o.pods)
	fmt.Fprintf(w, "| all Nodes Ready after start | %s |\n", r.registered.Round(100*time.Millisecond))
	fmt.Fprintf(w, "| all %d pods Running (API) after create | %s |\n", o.nodes*o.pods, r.running.Round(100*time.Millisecond))
	fmt.Fprintf(w, "| host RSS per node, median / max | %.1f / %.1f MiB |\n", median(r.hostRSS), maxOf(r.hostRSS))
	fmt.Fprintf(w, "| plugin RSS per node, median / max | %.1f / %.1f MiB |\n", median(r.pluginRSS), maxOf(r.pluginRSS))
	fmt.Fprintf(w, "| API requests at rest per node per minute | %.1f (over %s) |\n", perNodeMin, r.window.Round(time.Second))
	kinds := make([]string, 0, len(r.byKind))
	for k := range r.byKind {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return r.byKind[kinds[i]] > r.byKind[kinds[j]] })
	for _, k := range kinds {
		fmt.Fprintf(w, "| … %s | %.1f |\n", k, r.byKind[k]/float64(o.nodes)/r.window.Minutes())
	}
	for _, p := range r.problems {
		fmt.Fprintf(w, "\nFAILED: %s\n", p)
	}
}
