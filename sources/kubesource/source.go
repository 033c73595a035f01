package kubesource

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/podhost/podhost/sources"
)

// Annotations the source sets on the pods it reports, as the kubelet does.
const (
	AnnotationSource = "kubernetes.io/config.source"
	AnnotationSeen   = "kubernetes.io/config.seen"
	AnnotationMirror = "kubernetes.io/config.mirror"
	// SourceValue is the config.source of pods from the API server.
	SourceValue = "api"
)

// Options configure a Source.
type Options struct {
	// Client reaches the API server with the node's credentials.
	Client kubernetes.Interface
	// NodeName selects the pods: those whose spec.nodeName is this.
	NodeName string
	// Now stamps config.seen; time.Now when nil.
	Now func() time.Time
}

// Source is the apiserver source. Run drives it; the other methods are
// safe for concurrent use.
type Source struct {
	opts     Options
	informer cache.SharedIndexInformer
	updates  chan sources.Snapshot
	synced   chan struct{}
	changed  chan struct{}

	mu   sync.Mutex
	seen map[types.UID]string // config.seen by UID, for pods still present
}

// New returns a source; call Run to start it.
func New(opts Options) *Source {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	selector := fields.OneTermEqualSelector("spec.nodeName", opts.NodeName).String()
	pods := opts.Client.CoreV1().Pods(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return pods.Watch(ctx, o)
		},
	}
	return &Source{
		opts: opts,
		// Wrapped as client-go's generated informers do: a client that
		// cannot stream the initial list (the fake) lists instead.
		informer: cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, opts.Client), &v1.Pod{}, 0, cache.Indexers{}),
		updates:  make(chan sources.Snapshot, 1),
		synced:   make(chan struct{}),
		changed:  make(chan struct{}, 1),
		seen:     map[types.UID]string{},
	}
}

// Name is the source's name, sources.SourceAPIServer.
func (s *Source) Name() string { return sources.SourceAPIServer }

// Updates delivers a complete snapshot after every change. It holds only
// the newest: an unread snapshot is replaced by a newer one.
func (s *Source) Updates() <-chan sources.Snapshot { return s.updates }

// Synced is closed just before the first snapshot, the one of the initial
// list, is put on Updates: whoever received a snapshot finds it closed.
func (s *Source) Synced() <-chan struct{} { return s.synced }

// Run watches the API server until ctx is done, then returns nil. Call it
// once.
func (s *Source) Run(ctx context.Context) error {
	ring := func() {
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
	reg, err := s.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { ring() },
		UpdateFunc: func(any, any) { ring() },
		DeleteFunc: func(any) { ring() },
	})
	if err != nil {
		return fmt.Errorf("watching pods of node %s: %w", s.opts.NodeName, err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.informer.RunWithContext(ctx)
	}()
	defer wg.Wait()
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return nil // ctx is done
	}
	close(s.synced) // before the snapshot: whoever received it finds Synced closed
	s.publish()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.changed:
			s.publish()
		}
	}
}

// Get returns the pod the source holds under namespace/name, as the API
// server last sent it (read-only).
func (s *Source) Get(namespace, name string) (*v1.Pod, bool) {
	obj, ok, err := s.informer.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	pod, ok := obj.(*v1.Pod)
	return pod, ok
}

// Mirror returns the mirror pod the API server holds under
// namespace/name (read-only): the API's copy of a static pod, which the
// snapshots leave out.
func (s *Source) Mirror(namespace, name string) (*v1.Pod, bool) {
	pod, ok := s.Get(namespace, name)
	if !ok || pod.Annotations[AnnotationMirror] == "" {
		return nil, false
	}
	return pod, true
}

// Mirrors returns every mirror pod of this node the API server holds.
func (s *Source) Mirrors() []*v1.Pod {
	var out []*v1.Pod
	for _, obj := range s.informer.GetStore().List() {
		if pod, ok := obj.(*v1.Pod); ok && pod.Annotations[AnnotationMirror] != "" {
			out = append(out, pod)
		}
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// publish replaces the unread snapshot, if any, with the present.
func (s *Source) publish() {
	snap := s.snapshot()
	select {
	case <-s.updates:
	default:
	}
	s.updates <- snap // only Run sends
}

func (s *Source) snapshot() sources.Snapshot {
	var pods []*v1.Pod
	for _, obj := range s.informer.GetStore().List() {
		if pod, ok := obj.(*v1.Pod); ok && pod.Annotations[AnnotationMirror] == "" {
			pods = append(pods, pod)
		}
	}
	sort.Slice(pods, func(i, j int) bool { return key(pods[i]) < key(pods[j]) })
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := sources.Snapshot{Source: sources.SourceAPIServer}
	present := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		present[p.UID] = true
		seen, ok := s.seen[p.UID]
		if !ok {
			seen = s.opts.Now().UTC().Format(time.RFC3339Nano)
			s.seen[p.UID] = seen
		}
		pod := p.DeepCopy()
		StripContainerIDTypes(&pod.Status)
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[AnnotationSource] = SourceValue
		pod.Annotations[AnnotationSeen] = seen
		k := key(p)
		snap.Pods = append(snap.Pods, sources.Pod{Pod: pod, Origin: sources.Origin{
			Source: sources.SourceAPIServer, Key: k, Where: "apiserver pod " + k}})
	}
	for uid := range s.seen {
		if !present[uid] {
			delete(s.seen, uid)
		}
	}
	return snap
}

func key(p *v1.Pod) string { return p.Namespace + "/" + p.Name }
