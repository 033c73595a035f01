package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/bench/internal/hostproc"
	"github.com/podhost/podhost/images/localimages"
)

const namespace = "default"

// nodePod is one pod run through the API server, with its timestamps.
type nodePod struct {
	name    string
	created time.Time // just before Create
	running time.Time // first watch event with the pod running
	deleted time.Time // just before Delete
	gone    time.Time // the watch's DELETED event
}

// phaseResult is the pods of one node phase.
type phaseResult struct {
	pods               []*nodePod
	startWall, delWall time.Duration
}

type bench struct {
	o      options
	client kubernetes.Interface
	host   *hostproc.Host

	mu      sync.Mutex
	byName  map[string]*nodePod
	changed chan struct{} // closed and replaced on every recorded event
}

// newBench starts an informer on the pods bound to the node, which records
// when each pod of the run is first seen running and when it is deleted.
func newBench(ctx context.Context, o options, client kubernetes.Interface, h *hostproc.Host) (*bench, error) {
	b := &bench{o: o, client: client, host: h, byName: map[string]*nodePod{}, changed: make(chan struct{})}
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
		}))
	inf := f.Core().V1().Pods().Informer()
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { b.seen(obj, false) },
		UpdateFunc: func(_, obj any) { b.seen(obj, false) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			b.seen(obj, true)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return nil, fmt.Errorf("pod informer did not sync: %w", ctx.Err())
	}
	return b, nil
}

func (b *bench) seen(obj any, deleted bool) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.byName[pod.Name]
	switch {
	case p == nil:
		return
	case deleted && p.gone.IsZero():
		p.gone = now
	case !deleted && p.running.IsZero() && hostproc.PodRunning(pod):
		p.running = now
	default:
		return
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// podSpec is the floor's pod as a Kubernetes pod bound to the node.
func podSpec(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1.PodSpec{
			NodeName:                      nodeName,
			HostNetwork:                   true,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To(int64(floor.GracePeriod / time.Second)),
			Containers: []v1.Container{{
				Name:            floor.ContainerName,
				Image:           localimages.BusyboxName,
				ImagePullPolicy: v1.PullNever,
				Command:         []string{"sh", "-c", floor.TrapScript},
			}},
		},
	}
}

// phase creates the pods at once and waits until all run, then deletes
// them at once and waits until all are gone.
func (b *bench) phase(ctx context.Context, prefix string) (*phaseResult, error) {
	res := &phaseResult{}
	b.mu.Lock()
	for i := range b.o.pods {
		p := &nodePod{name: fmt.Sprintf("%s-%02d", prefix, i)}
		b.byName[p.name] = p
		res.pods = append(res.pods, p)
	}
	b.mu.Unlock()
	pods := b.client.CoreV1().Pods(namespace)

	t0 := time.Now()
	if err := b.each(res.pods, func(p *nodePod) error {
		_, err := pods.Create(ctx, podSpec(p.name), metav1.CreateOptions{})
		return err
	}, func(p *nodePod) *time.Time { return &p.created }); err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	if err := b.waitAll(ctx, res.pods, "Running", func(p *nodePod) bool { return !p.running.IsZero() }); err != nil {
		return nil, err
	}
	res.startWall = time.Since(t0)

	t0 = time.Now()
	if err := b.each(res.pods, func(p *nodePod) error {
		return pods.Delete(ctx, p.name, metav1.DeleteOptions{})
	}, func(p *nodePod) *time.Time { return &p.deleted }); err != nil {
		return nil, fmt.Errorf("delete: %w", err)
	}
	if err := b.waitAll(ctx, res.pods, "gone", func(p *nodePod) bool { return !p.gone.IsZero() }); err != nil {
		return nil, err
	}
	res.delWall = time.Since(t0)
	return res, nil
}

// each runs call for every pod at once, stamping *at(p) just before, and
// joins the errors.
func (b *bench) each(pods []*nodePod, call func(*nodePod) error, at func(*nodePod) *time.Time) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	start := make(chan struct{})
	for _, p := range pods {
		wg.Go(func() {
			<-start
			b.mu.Lock()
			*at(p) = time.Now()
			b.mu.Unlock()
			if err := call(p); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("pod %s: %w", p.name, err))
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return errors.Join(errs...)
}

// waitAll waits until done holds for every pod, the host exits, or the
// timeout passes.
func (b *bench) waitAll(ctx context.Context, pods []*nodePod, what string, done func(*nodePod) bool) error {
	deadline := time.After(b.o.timeout)
	for {
		b.mu.Lock()
		var pending []string
		for _, p := range pods {
			if !done(p) {
				pending = append(pending, p.name)
			}
		}
		changed := b.changed
		b.mu.Unlock()
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-b.host.Exited():
			return fmt.Errorf("the host exited while %d pods were not %s", len(pending), what)
		case <-deadline:
			return fmt.Errorf("%d of %d pods not %s after %s: %v", len(pending), len(pods), what, b.o.timeout, pending)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitNodeReady waits until the Node is Ready: the API server's admission
// and the node's own need its labels and allocatable.
func (b *bench) waitNodeReady(ctx context.Context) error {
	deadline := time.Now().Add(b.o.timeout)
	for {
		n, err := b.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err == nil {
			for _, c := range n.Status.Conditions {
				if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s not Ready after %s (last error %v)", nodeName, b.o.timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.host.Exited():
			return errors.New("the host exited before its node was Ready")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
