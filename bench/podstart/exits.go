package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/bench/internal/stats"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
)

// With -exits the harness times how soon a container's own exit reaches
// the host's pod status: -n pods, one at a time, each a container that
// exits 3 after a second and is never restarted. Each exit is timed from
// containerd's FinishedAt to the first host watch event that shows the
// container terminated, and, for comparison, to the first answer of a
// ContainerStatus poll every exitPoll that shows it EXITED. Each pod is
// deleted once both have seen its exit (not waiting for its sandbox to go:
// a pod that finished before its delete keeps it until the host's garbage
// collection); the phase ends when every pod is gone from the host API, or
// after -timeout.

// exitScript is the -exits phase's container.
const exitScript = "sleep 1; exit 3"

// exitCode is what exitScript exits with.
const exitCode = 3

// exitPoll is the period of the harness's own ContainerStatus poll.
const exitPoll = 5 * time.Millisecond

// exitPod is one pod of the -exits phase, with its timestamps.
type exitPod struct {
	name, uid string

	finished time.Time // containerd's FinishedAt of the container
	criSaw   time.Time // first ContainerStatus answer showing EXITED
	criCode  int32
	watchSaw time.Time // first watch event showing the container terminated
	watch    int32     // exit code in that event

	deleted time.Time // just before Delete
	goneAt  time.Time // the DELETED watch event

	terminated chan struct{} // closed at watchSaw
}

// observeExit records, for a pod of the -exits phase, the first watch
// event that shows its container terminated and its DELETED event. The
// caller holds b.mu.
func (b *bench) observeExit(ev localapi.PodEvent, now time.Time) {
	p := b.exitPods[ev.Summary.Name]
	if p == nil || ev.Summary.Namespace != namespace {
		return
	}
	if ev.Type == localapi.Deleted {
		if p.goneAt.IsZero() && !p.deleted.IsZero() {
			p.goneAt = now
		}
		return
	}
	if !p.watchSaw.IsZero() || ev.Pod == nil {
		return
	}
	for _, cs := range ev.Pod.Status.ContainerStatuses {
		if cs.Name == floor.ContainerName && cs.State.Terminated != nil {
			p.watchSaw, p.watch = now, cs.State.Terminated.ExitCode
			close(p.terminated)
			return
		}
	}
}

// exitsPhase runs the -exits pods one at a time, deletes each once both
// the watch and the poll have seen its exit, and waits for them to go.
func (b *bench) exitsPhase(ctx context.Context) ([]*exitPod, error) {
	b.watch(ctx)
	var pods []*exitPod
	for i := range b.o.pods {
		p := &exitPod{name: fmt.Sprintf("exit-%02d", i), terminated: make(chan struct{})}
		pods = append(pods, p)
		b.mu.Lock()
		b.exitPods[p.name] = p
		b.mu.Unlock()
		if err := b.runExit(ctx, p); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	deadline := time.Now().Add(b.o.timeout)
	for time.Now().Before(deadline) && b.exitsGone(pods) < len(pods) {
		if err := settle(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
	// Copies, as the watch goes on writing to the pods.
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*exitPod, len(pods))
	for i, p := range pods {
		c := *p
		out[i] = &c
	}
	return out, nil
}

// exitsGone counts the pods the watch has seen DELETED.
func (b *bench) exitsGone(pods []*exitPod) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, p := range pods {
		if !p.goneAt.IsZero() {
			n++
		}
	}
	return n
}

// runExit applies one pod, waits for its exit in both views, checks the
// exit code, and deletes it.
func (b *bench) runExit(ctx context.Context, p *exitPod) error {
	uid, err := b.apply(ctx, p.name, manifest(p.name, exitScript, v1.RestartPolicyNever))
	if err != nil {
		return err
	}
	b.mu.Lock()
	p.uid = uid
	b.mu.Unlock()
	polled := b.pollExit(ctx, p)
	select {
	case <-p.terminated:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.o.timeout):
		return fmt.Errorf("the watch showed no terminated container within %v", b.o.timeout)
	}
	if err := <-polled; err != nil {
		return err
	}
	b.mu.Lock()
	watchCode, criCode := p.watch, p.criCode
	b.mu.Unlock()
	if watchCode != exitCode || criCode != exitCode {
		return fmt.Errorf("exit code %d in the watch, %d in CRI; want %d", watchCode, criCode, exitCode)
	}
	b.mu.Lock()
	p.deleted = time.Now()
	b.mu.Unlock()
	if _, err := b.host.Client.Delete(ctx, namespace, p.name, localapi.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}

// pollExit asks containerd for the pod's container every exitPoll until it
// shows EXITED, and records that moment, FinishedAt and the exit code.
// The channel yields nil or an error once.
func (b *bench) pollExit(ctx context.Context, p *exitPod) <-chan error {
	rt := b.ctrd.Runtime
	filter := &runtimeapi.ContainerFilter{LabelSelector: map[string]string{runtimemanager.LabelPodUID: p.uid}}
	id := ""
	return pollUntil(ctx, exitPoll, b.o.timeout, func() (bool, error) {
		if id == "" {
			cs, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
			if err != nil {
				return false, fmt.Errorf("ListContainers: %w", err)
			}
			if len(cs.Containers) == 0 {
				return false, nil
			}
			id = cs.Containers[0].Id
		}
		st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		now := time.Now()
		if err != nil {
			return false, fmt.Errorf("ContainerStatus: %w", err)
		}
		s := st.GetStatus()
		if s.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
			return false, nil
		}
		b.mu.Lock()
		p.criSaw, p.finished, p.criCode = now, time.Unix(0, s.FinishedAt), s.ExitCode
		b.mu.Unlock()
		return true, nil
	}, func() error {
		return fmt.Errorf("container not EXITED in CRI within %v (id %q)", b.o.timeout, id)
	})
}

// exitsTable prints the two views of the exits against FinishedAt.
func exitsTable(pods []*exitPod) string {
	var watch, cri, gap, gone []time.Duration
	for _, p := range pods {
		watch = append(watch, p.watchSaw.Sub(p.finished))
		cri = append(cri, p.criSaw.Sub(p.finished))
		gap = append(gap, p.watchSaw.Sub(p.criSaw))
		if !p.goneAt.IsZero() {
			gone = append(gone, p.goneAt.Sub(p.deleted))
		}
	}
	const goal = 20 * time.Millisecond
	var b strings.Builder
	fmt.Fprintf(&b, "\nContainer exits, %d pods one at a time (busybox `sh -c '%s'`, restartPolicy Never), from containerd's FinishedAt:\n\n", len(pods), exitScript)
	b.WriteString("| measure | pods | p50 / p75 / p90 / p99 / max | goal at p50 | met |\n|---|---|---|---|---|\n")
	w := stats.Summarize(watch)
	met := "**no**"
	if w.P50 <= goal {
		met = "yes"
	}
	fmt.Fprintf(&b, "| host pod watch shows the container terminated (exit %d) − FinishedAt | %d | %s ms | ≤ %s | %s |\n", exitCode, w.N, tenths(w), stats.MS(goal), met)
	c := stats.Summarize(cri)
	fmt.Fprintf(&b, "| (info) CRI ContainerStatus poll every %s first shows EXITED − FinishedAt | %d | %s ms | – | – |\n", exitPoll, c.N, tenths(c))
	g := stats.Summarize(gap)
	fmt.Fprintf(&b, "| (info) host watch − CRI poll, per pod | %d | %s ms | – | – |\n", g.N, tenths(g))
	gn := stats.Summarize(gone)
	fmt.Fprintf(&b, "| (info) delete of the exited pod → gone from the host API (watch DELETED) | %d of %d | %s ms | – | – |\n", gn.N, len(pods), tenths(gn))
	return b.String()
}

// tenths formats p50 / p75 / p90 / p99 / max in milliseconds with one
// decimal: the exit latencies are a few milliseconds.
func tenths(s stats.Summary) string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }
	return strings.Join([]string{ms(s.P50), ms(s.P75), ms(s.P90), ms(s.P99), ms(s.Max)}, " / ")
}
