// Package localapitest provides in-memory implementations of the local
// API's Pods and Events views, for tests of the API and of the CLI. Apply
// goes through the real api source (sources/apisource), so decoding and
// validation errors are the real ones. Only tests may import it.
package localapitest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/sources/apisource"
)

// Pods is a fake localapi.Pods. Tests move pods along with Set.
type Pods struct {
	src *apisource.Source

	mu       sync.Mutex
	items    map[string]localapi.PodItem
	watchers map[chan localapi.PodChange]struct{}
	logs     map[string]string
	// watchedLists counts the Lists made while a watch was open: a watch
	// stream lists after it subscribes, so a test that changes pods once
	// this is non-zero knows the stream will show the changes in order.
	watchedLists int
}

// NewPods returns an empty fake whose created pods get UIDs uid-1, uid-2, …
func NewPods() *Pods {
	n := 0
	var mu sync.Mutex
	src := apisource.New(apisource.Options{
		Persister: &apisource.MemoryPersister{},
		NewUID: func() types.UID {
			mu.Lock()
			defer mu.Unlock()
			n++
			return types.UID(fmt.Sprintf("uid-%d", n))
		},
	})
	_ = src.Load(context.Background()) // a memory persister never fails
	return &Pods{
		src:      src,
		items:    map[string]localapi.PodItem{},
		watchers: map[chan localapi.PodChange]struct{}{},
		logs:     map[string]string{},
	}
}

// Set adds or replaces a pod and tells the watchers.
func (f *Pods) Set(it localapi.PodItem) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := it.Pod.Namespace + "/" + it.Pod.Name
	typ := localapi.Modified
	if _, ok := f.items[k]; !ok {
		typ = localapi.Added
	}
	f.items[k] = it
	f.notifyLocked(localapi.PodChange{Type: typ, Item: it})
}

// SetPhase moves a pod to phase with reason as its first container's
// waiting reason (running and ready when phase is Running).
func (f *Pods) SetPhase(namespace, name string, phase v1.PodPhase, reason string) {
	f.mu.Lock()
	it, ok := f.items[namespace+"/"+name]
	f.mu.Unlock()
	if !ok {
		return
	}
	p := it.Pod.DeepCopy()
	p.Status.Phase = phase
	st := v1.ContainerStatus{Name: "app"}
	switch {
	case phase == v1.PodRunning:
		st.Ready = true
		st.State.Running = &v1.ContainerStateRunning{}
	case reason != "":
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: reason}
	}
	p.Status.ContainerStatuses = []v1.ContainerStatus{st}
	it.Pod = p
	f.Set(it)
}

// Remove drops a pod and tells the watchers.
func (f *Pods) Remove(namespace, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := namespace + "/" + name
	if it, ok := f.items[k]; ok {
		delete(f.items, k)
		f.notifyLocked(localapi.PodChange{Type: localapi.Deleted, Item: it})
	}
}

// SetLogs sets the log text of a container.
func (f *Pods) SetLogs(namespace, name, container, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs[namespace+"/"+name+"/"+container] = text
}

// Watchers counts the open watches.
func (f *Pods) Watchers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchers)
}

// WatchListed reports whether a List was made while a watch was open. A
// watch stream subscribes and then lists, so once this is true a change
// made now reaches the stream after the listed state, never folded into it.
func (f *Pods) WatchListed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchers) > 0 && f.watchedLists > 0
}

func (f *Pods) notifyLocked(c localapi.PodChange) {
	for w := range f.watchers {
		select {
		case w <- c:
		default: // a slow watcher loses changes
		}
	}
}

// Apply implements localapi.Pods.
func (f *Pods) Apply(ctx context.Context, where string, body []byte) (localapi.ApplyResult, error) {
	pod, op, err := f.src.Apply(ctx, where, body)
	if err != nil {
		return localapi.ApplyResult{}, MapError(err)
	}
	it := localapi.PodItem{Pod: pod, Source: "api"}
	if op != apisource.Unchanged {
		f.Set(it)
	}
	return localapi.ApplyResult{Op: string(op), Item: it}, nil
}

// Delete implements localapi.Pods: the pod is marked, or with Force
// removed at once.
func (f *Pods) Delete(ctx context.Context, namespace, name string, opts localapi.DeleteOptions) (localapi.PodItem, error) {
	pod, err := f.src.Delete(ctx, namespace, name, apisource.DeleteOptions{GracePeriod: opts.GracePeriod, Force: opts.Force})
	if err != nil {
		return localapi.PodItem{}, MapError(err)
	}
	f.mu.Lock()
	it, ok := f.items[namespace+"/"+name]
	f.mu.Unlock()
	if !ok {
		it = localapi.PodItem{Source: "api"}
	}
	p := pod.DeepCopy()
	if it.Pod != nil {
		p.Status = it.Pod.Status
	}
	it.Pod = p
	if opts.Force {
		f.Remove(namespace, name)
	} else {
		f.Set(it)
	}
	return it, nil
}

// Get implements localapi.Pods.
func (f *Pods) Get(_ context.Context, namespace, name string) (localapi.PodItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	it, ok := f.items[namespace+"/"+name]
	if !ok {
		return localapi.PodItem{}, fmt.Errorf("pod %s/%s: %w", namespace, name, localapi.ErrNotFound)
	}
	return it, nil
}

// List implements localapi.Pods, sorted by namespace/name.
func (f *Pods) List(context.Context) ([]localapi.PodItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.watchers) > 0 {
		f.watchedLists++
	}
	out := make([]localapi.PodItem, 0, len(f.items))
	for _, it := range f.items {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Pod.Namespace+"/"+out[i].Pod.Name < out[j].Pod.Namespace+"/"+out[j].Pod.Name
	})
	return out, nil
}

// Watch implements localapi.Pods.
func (f *Pods) Watch(ctx context.Context) (<-chan localapi.PodChange, error) {
	ch := make(chan localapi.PodChange, 64)
	f.mu.Lock()
	f.watchers[ch] = struct{}{}
	f.mu.Unlock()
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		delete(f.watchers, ch)
		close(ch)
		f.mu.Unlock()
	})
	return ch, nil
}

// Logs implements localapi.Pods: the text set with SetLogs, then with
// Follow a wait for ctx.
func (f *Pods) Logs(ctx context.Context, namespace, name string, opts localapi.LogOptions, w io.Writer) error {
	f.mu.Lock()
	_, ok := f.items[namespace+"/"+name]
	text, hasLog := f.logs[namespace+"/"+name+"/"+opts.Container]
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("pod %s/%s: %w", namespace, name, localapi.ErrNotFound)
	}
	if !hasLog {
		return fmt.Errorf("pod %s/%s has no container %q: %w", namespace, name, opts.Container, localapi.ErrNotFound)
	}
	if opts.TailLines != nil {
		lines := strings.SplitAfter(text, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if n := int(*opts.TailLines); n < len(lines) {
			lines = lines[len(lines)-n:]
		}
		text = strings.Join(lines, "")
	}
	if _, err := io.WriteString(w, text); err != nil {
		return err
	}
	if opts.Follow {
		<-ctx.Done()
	}
	return nil
}

// MapError maps the api source's errors onto the local API's.
func MapError(err error) error {
	switch {
	case errors.Is(err, apisource.ErrNotFound):
		return fmt.Errorf("%w: %w", localapi.ErrNotFound, err)
	case errors.Is(err, apisource.ErrTerminating), errors.Is(err, apisource.ErrUIDMismatch):
		return fmt.Errorf("%w: %w", localapi.ErrConflict, err)
	case errors.Is(err, apisource.ErrNotLoaded):
		return fmt.Errorf("%w: %w", localapi.ErrUnavailable, err)
	case errors.Is(err, apisource.ErrInvalid):
		return localapi.BodyError(err)
	}
	return err
}

// Events is a fake localapi.Events.
type Events struct {
	mu       sync.Mutex
	events   []localapi.Event
	watchers map[chan localapi.Event]struct{}
}

// Record adds an event about a pod and tells the watchers.
func (e *Events) Record(namespace, name, typ, reason, message string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	ev := localapi.Event{Seq: uint64(len(e.events) + 1), Type: typ, Reason: reason, Message: message, Count: 1,
		Object: localapi.EventObject{Kind: "Pod", Namespace: namespace, Name: name}, FirstTime: now, LastTime: now}
	e.events = append(e.events, ev)
	for w := range e.watchers {
		select {
		case w <- ev:
		default:
		}
	}
}

// Watchers counts the open watches.
func (e *Events) Watchers() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.watchers)
}

// List implements localapi.Events.
func (e *Events) List(_ context.Context, f localapi.EventFilter) ([]localapi.Event, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []localapi.Event
	for _, ev := range e.events {
		if f.Match(ev) {
			out = append(out, ev)
		}
	}
	return out, nil
}

// Watch implements localapi.Events.
func (e *Events) Watch(ctx context.Context, _ localapi.EventFilter) (<-chan localapi.Event, error) {
	ch := make(chan localapi.Event, 64)
	e.mu.Lock()
	if e.watchers == nil {
		e.watchers = map[chan localapi.Event]struct{}{}
	}
	e.watchers[ch] = struct{}{}
	e.mu.Unlock()
	context.AfterFunc(ctx, func() {
		e.mu.Lock()
		delete(e.watchers, ch)
		close(ch)
		e.mu.Unlock()
	})
	return ch, nil
}

// Pod is a convenience for tests: a pod item with one container "app".
func Pod(namespace, name string, phase v1.PodPhase, errText string) localapi.PodItem {
	return localapi.PodItem{Source: "file", Error: errText, Pod: &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Minute))},
		Spec:   v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox:1"}}},
		Status: v1.PodStatus{Phase: phase},
	}}
}
