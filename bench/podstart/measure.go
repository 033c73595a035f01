package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/bench/internal/hostproc"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/test/crisetup"
)

const namespace = "default"

// hostPod is one pod run through the host, with its timestamps.
type hostPod struct {
	name string
	uid  string

	applied  time.Time // just before Apply
	answered time.Time // Apply returned: the pod is stored
	running  time.Time // first watch event with the pod running

	deleted  time.Time // just before Delete
	stopped  time.Time // first CRI poll with every container exited or gone
	finished time.Time // the latest container finishedAt, per containerd
	removed  time.Time // first CRI poll with no sandbox of the UID
	apiGone  time.Time // DELETED watch event
}

// hostResults are the pods of one host phase.
type hostResults struct {
	pods               []*hostPod
	startWall, delWall time.Duration
	// calls are the plugin's calls to containerd from the first apply to
	// the last pod gone from the host API; nil without -calls.
	calls *callCounts
}

func (r *hostResults) durations(from, to func(*hostPod) time.Time) []time.Duration {
	ds := make([]time.Duration, 0, len(r.pods))
	for _, p := range r.pods {
		if a, b := from(p), to(p); !a.IsZero() && !b.IsZero() {
			ds = append(ds, b.Sub(a))
		}
	}
	return ds
}

type bench struct {
	o     options
	ctrd  *crisetup.Containerd
	host  *hostproc.Host
	calls *counter // nil without -calls

	watchOnce sync.Once
	mu        sync.Mutex
	byName    map[string]*hostPod
	runningCh map[string]chan struct{}
	exitPods  map[string]*exitPod // the -exits phase's pods
	watchErr  error
}

// podManifest is the floor's pod as a Kubernetes pod.
func podManifest(name string) []byte {
	return manifest(name, floor.TrapScript, "")
}

// manifest is a host-network pod with one busybox container running the
// shell script, grace period 5 s, and the restart policy (the default
// when empty).
func manifest(name, script string, restart v1.RestartPolicy) []byte {
	grace := int64(floor.GracePeriod / time.Second)
	pod := &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1.PodSpec{
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: &grace,
			RestartPolicy:                 restart,
			Containers: []v1.Container{{
				Name:            floor.ContainerName,
				Image:           localimages.BusyboxName,
				ImagePullPolicy: v1.PullNever,
				Command:         []string{"sh", "-c", script},
			}},
		},
	}
	b, err := json.Marshal(pod)
	if err != nil {
		panic(err)
	}
	return b
}

// watch follows the host's pod watch for the rest of the run, reconnecting
// when the stream ends (the first events of a stream resync every pod).
func (b *bench) watch(ctx context.Context) {
	b.watchOnce.Do(func() {
		b.byName = map[string]*hostPod{}
		b.runningCh = map[string]chan struct{}{}
		b.exitPods = map[string]*exitPod{}
		go func() {
			for ctx.Err() == nil {
				err := b.host.Client.WatchPods(ctx, func(ev localapi.PodEvent) error {
					now := time.Now()
					b.mu.Lock()
					defer b.mu.Unlock()
					b.observeExit(ev, now)
					p := b.byName[ev.Summary.Name]
					if p == nil || ev.Summary.Namespace != namespace {
						return nil
					}
					switch {
					case ev.Type == localapi.Deleted:
						if p.apiGone.IsZero() && !p.deleted.IsZero() {
							p.apiGone = now
						}
					case hostproc.PodRunning(ev.Pod) && p.running.IsZero():
						p.running = now
						close(b.runningCh[p.name])
					}
					return nil
				})
				if err != nil && ctx.Err() == nil {
					b.mu.Lock()
					b.watchErr = err
					b.mu.Unlock()
				}
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		// Let the stream open before the first apply.
		time.Sleep(500 * time.Millisecond)
	})
}

// hostPhase applies n pods and waits for each to run, then deletes them and
// waits for each to go: one by one, or all at once.
func (b *bench) hostPhase(ctx context.Context, prefix string, atOnce bool) (*hostResults, error) {
	return b.hostPhaseWith(ctx, prefix, atOnce, nil)
}

// hostPhaseWith is hostPhase that calls whileRunning, when not nil, once
// every pod runs and before the first delete.
func (b *bench) hostPhaseWith(ctx context.Context, prefix string, atOnce bool, whileRunning func() error) (*hostResults, error) {
	b.watch(ctx)
	res := &hostResults{}
	for i := range b.o.pods {
		p := &hostPod{name: fmt.Sprintf("%s-%02d", prefix, i)}
		res.pods = append(res.pods, p)
		b.mu.Lock()
		b.byName[p.name] = p
		b.runningCh[p.name] = make(chan struct{})
		b.mu.Unlock()
	}

	counted := b.calls.reset()
	t0 := time.Now()
	if err := each(res.pods, atOnce, func(p *hostPod) error { return b.start(ctx, p) }); err != nil {
		return nil, err
	}
	res.startWall = time.Since(t0)
	if whileRunning != nil {
		if err := whileRunning(); err != nil {
			return nil, err
		}
	}

	t0 = time.Now()
	if atOnce {
		poll := b.pollDeletes(ctx, res.pods)
		err := each(res.pods, true, func(p *hostPod) error { return b.delete(ctx, p) })
		if err != nil {
			return nil, errors.Join(err, <-poll)
		}
		if err := <-poll; err != nil {
			return nil, err
		}
	} else {
		for _, p := range res.pods {
			poll := b.pollDeletes(ctx, []*hostPod{p})
			if err := b.delete(ctx, p); err != nil {
				return nil, errors.Join(err, <-poll)
			}
			if err := <-poll; err != nil {
				return nil, err
			}
		}
	}
	res.delWall = time.Since(t0)
	b.waitAPIGone(ctx, res.pods, 5*time.Second)
	res.calls = b.calls.since(counted)
	return res, nil
}

// waitAPIGone gives the watch up to limit to report the pods' DELETED
// events: a pod's lifecycle ends when it is gone from the host's API.
func (b *bench) waitAPIGone(ctx context.Context, pods []*hostPod, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		b.mu.Lock()
		gone := 0
		for _, p := range pods {
			if !p.apiGone.IsZero() {
				gone++
			}
		}
		b.mu.Unlock()
		if gone == len(pods) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// each runs fn for every pod, in turn or all at once, and joins the errors.
func each(pods []*hostPod, atOnce bool, fn func(*hostPod) error) error {
	if !atOnce {
		for _, p := range pods {
			if err := fn(p); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range pods {
		wg.Go(func() {
			if err := fn(p); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// start applies the pod and waits until the watch reports it running.
func (b *bench) start(ctx context.Context, p *hostPod) error {
	b.mu.Lock()
	ch := b.runningCh[p.name]
	p.applied = time.Now()
	b.mu.Unlock()
	uid, err := b.apply(ctx, p.name, podManifest(p.name))
	if err != nil {
		return err
	}
	b.mu.Lock()
	p.uid, p.answered = uid, time.Now()
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.o.timeout):
		b.mu.Lock()
		werr := b.watchErr
		b.mu.Unlock()
		d, _ := b.host.Client.Pod(ctx, namespace, p.name)
		return fmt.Errorf("pod %s not running after %v (summary %+v; last watch error %v)", p.name, b.o.timeout, d.Summary, werr)
	}
}

// apply applies the pod manifest through the local API and returns the
// pod's UID.
func (b *bench) apply(ctx context.Context, name string, body []byte) (string, error) {
	resp, err := b.host.Client.Apply(ctx, body)
	if err != nil {
		return "", fmt.Errorf("apply %s: %w", name, err)
	}
	uid := resp.Summary.UID
	if resp.Pod != nil && resp.Pod.UID != "" {
		uid = string(resp.Pod.UID)
	}
	if uid == "" {
		return "", fmt.Errorf("apply %s: the answer has no UID", name)
	}
	return uid, nil
}

// delete deletes the pod; pollDeletes sees it go.
func (b *bench) delete(ctx context.Context, p *hostPod) error {
	b.mu.Lock()
	p.deleted = time.Now()
	b.mu.Unlock()
	if _, err := b.host.Client.Delete(ctx, namespace, p.name, localapi.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete %s: %w", p.name, err)
	}
	return nil
}

// pollDeletes lists the host's containers and sandboxes on containerd every
// poll period until every pod's sandbox is gone, recording when its
// containers were first all exited (or gone) and when its sandbox went. It
// only judges a pod whose Delete began before the list call. The channel
// yields nil or an error once.
func (b *bench) pollDeletes(ctx context.Context, pods []*hostPod) <-chan error {
	managed := map[string]string{runtimemanager.LabelManagedBy: runtimemanager.ManagedByValue}
	rt := b.ctrd.Runtime
	pending := 0
	var lookups sync.WaitGroup
	return pollUntil(ctx, b.o.poll, b.o.timeout+10*time.Second, func() (bool, error) {
		asked := time.Now()
		cs, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: managed}})
		if err != nil {
			return false, fmt.Errorf("ListContainers: %w", err)
		}
		sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: managed}})
		if err != nil {
			return false, fmt.Errorf("ListPodSandbox: %w", err)
		}
		now := time.Now()
		live := map[string]int{}
		exited := map[string][]string{}
		for _, c := range cs.Containers {
			uid := c.Labels[runtimemanager.LabelPodUID]
			if c.State == runtimeapi.ContainerState_CONTAINER_EXITED {
				exited[uid] = append(exited[uid], c.Id)
			} else {
				live[uid]++
			}
		}
		sandboxes := map[string]int{}
		for _, sb := range sbs.Items {
			sandboxes[sb.Labels[runtimemanager.LabelPodUID]]++
		}
		pending = 0
		for _, p := range pods {
			b.mu.Lock()
			del, uid := p.deleted, p.uid
			b.mu.Unlock()
			if del.IsZero() || !del.Before(asked) {
				pending++
				continue
			}
			if p.stopped.IsZero() && live[uid] == 0 {
				p.stopped = now
				// Read finishedAt beside the poll: waiting here would
				// delay the next listing by one ContainerStatus per pod
				// that stopped in this one, and so the pods seen next.
				ids := exited[uid]
				lookups.Go(func() {
					t := b.finishedAt(ctx, ids)
					b.mu.Lock()
					p.finished = t
					b.mu.Unlock()
				})
			}
			if p.removed.IsZero() && sandboxes[uid] == 0 {
				p.removed = now
			}
			if p.removed.IsZero() {
				pending++
			}
		}
		if pending == 0 {
			lookups.Wait()
		}
		return pending == 0, nil
	}, func() error {
		lookups.Wait()
		return fmt.Errorf("%d of %d deleted pods still have a sandbox after %v", pending, len(pods), b.o.timeout)
	})
}

// floorProbe makes, while the floor stops and tears down its pods, the
// same CRI calls every poll period as pollDeletes makes while the host
// deletes its own (a listing of the containers and one of the sandboxes,
// by label), so that both sides run under the same probe load; it returns
// the function that ends them.
func (b *bench) floorProbe(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	rt, labels := b.ctrd.Runtime, map[string]string{floor.BenchLabel: floor.BenchLabelValue}
	go func() {
		defer close(done)
		tick := time.NewTicker(b.o.poll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			_, _ = rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: labels}})
			_, _ = rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: labels}})
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// pollUntil calls step every period, in a goroutine, until it reports
// done or fails, ctx ends, or limit has passed (the error is then late's).
// The channel yields nil or the error once.
func pollUntil(ctx context.Context, period, limit time.Duration, step func() (bool, error), late func() error) <-chan error {
	out := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(limit)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			done, err := step()
			switch {
			case err != nil:
				out <- err
				return
			case done:
				out <- nil
				return
			case time.Now().After(deadline):
				out <- late()
				return
			}
			select {
			case <-ctx.Done():
				out <- ctx.Err()
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// finishedAt is the latest finish time containerd reports of the
// containers, or zero when none can be asked (all removed already).
func (b *bench) finishedAt(ctx context.Context, ids []string) time.Time {
	var latest time.Time
	for _, id := range ids {
		st, err := b.ctrd.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if err != nil || st.GetStatus().GetFinishedAt() == 0 {
			continue
		}
		if t := time.Unix(0, st.Status.FinishedAt); t.After(latest) {
			latest = t
		}
	}
	return latest
}
