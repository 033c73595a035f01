package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/runtimemanager/crilog"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/apisource"
	"github.com/podhost/podhost/sources/manifest"
)

// watchPeriod is how often a pod watch compares the pods with what it last
// reported when nothing woke it meanwhile (a safety net: see Watch).
var watchPeriod = time.Second

// podsAPI serves the local API's pod endpoints from the node.
type podsAPI struct{ n *Node }

// Pods returns the node's pod API for the local API server.
func (n *Node) Pods() localapi.Pods { return podsAPI{n} }

func (a podsAPI) List(context.Context) ([]localapi.PodItem, error) {
	return a.n.podItems(), nil
}

// podItems lists the desired pods with their current status, then those
// that left the set but are still stopping, then the rejected ones with
// their error.
func (n *Node) podItems() []localapi.PodItem {
	refs := n.podRefs()
	items := make([]localapi.PodItem, 0, len(refs))
	for _, r := range refs {
		items = append(items, n.podItem(r))
	}
	return items
}

// podRef is one pod of the list before it is copied: what its item is
// made of, so that a watch tells an unchanged pod by comparing refs,
// without copying or deep-comparing it. The pod is shared with the desired
// set, the leaving pods or the rejections, and never modified.
type podRef struct {
	pod *v1.Pod
	// version is the status manager's version of the pod's status when the
	// ref was taken (0: none); podItem reads the status after it, so an
	// item is never older than its ref says.
	version uint64
	// withStatus says the status manager's status replaces pod.Status.
	withStatus bool
	source     string
	err        string
}

func (r podRef) key() string {
	return r.pod.Namespace + "/" + r.pod.Name + "/" + string(r.pod.UID)
}

// podItem is the ref's pod, copied, with its current status.
func (n *Node) podItem(r podRef) localapi.PodItem {
	pod := r.pod.DeepCopy()
	if r.withStatus {
		if st, ok := n.status.PodStatus(pod.UID); ok {
			pod.Status = st
		}
	}
	return localapi.PodItem{Pod: pod, Source: r.source, Error: r.err}
}

// podRefs lists what podItems lists, without copying a pod.
func (n *Node) podRefs() []podRef {
	pods, _ := n.desired.Pods()
	refs := make([]podRef, 0, len(pods))
	desired := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		desired[p.UID] = true
		r := podRef{pod: p, version: n.status.Version(p.UID), withStatus: true}
		if o, ok := n.desired.Origin(p.UID); ok {
			r.source = o.Source
		}
		if r.source == sources.SourceAPI && n.api != nil && !n.api.Has(p.Namespace, p.Name, p.UID) {
			// Its finished status was written and the pod removed; the
			// status manager forgot the status, and the desired set has
			// not shown the removal yet. Its copy there still carries
			// the status it was applied with: the pod is gone.
			continue
		}
		refs = append(refs, r)
	}
	// A pod that left the desired set is served, terminating, until its
	// worker finished it.
	for _, p := range n.leaving.list(desired, n.core.ShouldPodBeFinished) {
		refs = append(refs, podRef{pod: p, version: n.status.Version(p.UID), withStatus: true, source: podSource(p)})
	}
	rejected, errs := n.desired.Rejected()
	for _, r := range rejected {
		refs = append(refs, podRef{pod: r.Pod.Pod, source: r.Pod.Origin.Source, err: r.Err.Error()})
	}
	// A request the API source refused names a pod that may not exist.
	for _, err := range errs {
		if item, ok := sourceErrorItem(err); ok {
			refs = append(refs, podRef{pod: item.Pod, source: item.Source, err: item.Error})
			continue
		}
		var inv *apisource.InvalidError
		if errors.As(err, &inv) && inv.Name != "" {
			for i := range refs {
				if refs[i].pod.Namespace == inv.Namespace && refs[i].pod.Name == inv.Name && refs[i].err == "" {
					refs[i].err = inv.Error()
				}
			}
		}
	}
	return refs
}

// sourceErrorItem shows a manifest document that did not become a pod, a
// PersistentVolume or a PersistentVolumeClaim (it does not parse or does
// not validate) as a rejected pod carrying the error, which names the
// file, the document and the field: a pod under the name written in the
// file; a volume or a claim (whose error names it), or a document that did
// not decode that far, under the file's name.
func sourceErrorItem(err error) (localapi.PodItem, bool) {
	var doc *manifest.DocumentError
	if !errors.As(err, &doc) {
		return localapi.PodItem{}, false
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: doc.Namespace, Name: doc.Name}}
	if doc.Kind != "" && doc.Kind != "Pod" {
		pod.Name = "" // not a pod: no pod of that name
	}
	if pod.Namespace == "" {
		pod.Namespace = v1.NamespaceDefault
	}
	if pod.Name == "" {
		pod.Name = filepath.Base(doc.Path)
	}
	return localapi.PodItem{Pod: pod, Source: sources.SourceFile, Error: err.Error()}, true
}

func (a podsAPI) Get(_ context.Context, namespace, name string) (localapi.PodItem, error) {
	for _, r := range a.n.podRefs() {
		if r.pod.Namespace == namespace && r.pod.Name == name {
			return a.n.podItem(r), nil
		}
	}
	return localapi.PodItem{}, fmt.Errorf("%w: pod %s/%s", localapi.ErrNotFound, namespace, name)
}

func (a podsAPI) Apply(ctx context.Context, where string, body []byte) (localapi.ApplyResult, error) {
	pod, op, err := a.n.api.Apply(ctx, where, body)
	if err != nil {
		var inv *apisource.InvalidError
		if errors.As(err, &inv) {
			a.n.events.Record(events.Object{Kind: events.KindPod, Namespace: inv.Namespace, Name: inv.Name},
				events.Warning, events.ReasonFailed, inv.Error())
			a.n.log.Warn("pod refused", "source", where, "pod", inv.Namespace+"/"+inv.Name, "err", inv)
		}
		return localapi.ApplyResult{}, apiError(err)
	}
	return localapi.ApplyResult{Op: string(op), Item: localapi.PodItem{Pod: pod, Source: sources.SourceAPI}}, nil
}

func (a podsAPI) Delete(ctx context.Context, namespace, name string, opts localapi.DeleteOptions) (localapi.PodItem, error) {
	if item, err := a.Get(ctx, namespace, name); err == nil && item.Source != sources.SourceAPI {
		return localapi.PodItem{}, fmt.Errorf("%w: pod %s/%s comes from source %q: remove it there (for a static pod, remove its manifest file)",
			localapi.ErrConflict, namespace, name, item.Source)
	}
	pod, err := a.n.api.Delete(ctx, namespace, name, apisource.DeleteOptions{GracePeriod: opts.GracePeriod, Force: opts.Force})
	if err != nil {
		return localapi.PodItem{}, apiError(err)
	}
	if opts.Force {
		// The pod just left the desired set, which kills it with its own
		// grace period: force means none.
		a.n.workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: pod,
			KillPodOptions: &lifecycle.KillPodOptions{GracePeriodOverride: new(int64(0))}})
	}
	return localapi.PodItem{Pod: pod, Source: sources.SourceAPI}, nil
}

// apiError gives the API source's errors the local API's meaning.
func apiError(err error) error {
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

// Watch reports changes by comparing the pods with what it last reported,
// as soon as a pod's status has a new version, a new desired set is shown
// or a worker finished its pod, and otherwise every watchPeriod as a safety
// net: it can never block the host, and a pod whose ref is unchanged (the
// same desired pod, the same status version) costs neither a copy nor a
// comparison, so an open watch on a node at rest is cheap.
func (a podsAPI) Watch(ctx context.Context) (<-chan localapi.PodChange, error) {
	out := make(chan localapi.PodChange, 64)
	w := newPodWatch(a.n.podItem)
	// The channel is taken before the pods are read, so a change made
	// while they are read wakes the next step.
	changed, shown, finished := a.n.status.Changed(), a.n.desired.changed.C(), a.n.finishedPods.C()
	w.step(a.n.podRefs())
	go func() {
		defer close(out)
		tick := time.NewTicker(watchPeriod)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
			case <-shown:
			case <-finished:
			case <-tick.C:
			}
			changed, shown, finished = a.n.status.Changed(), a.n.desired.changed.C(), a.n.finishedPods.C()
			for _, c := range w.step(a.n.podRefs()) {
				select {
				case out <- c:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// podWatch is what one watch last reported, by pod.
type podWatch struct {
	item func(podRef) localapi.PodItem
	last map[string]watched
}

type watched struct {
	ref  podRef
	item localapi.PodItem
}

func newPodWatch(item func(podRef) localapi.PodItem) *podWatch {
	return &podWatch{item: item, last: map[string]watched{}}
}

// step takes the pods now and returns the changes since the last step:
// added, modified (the item differs, not only its ref), deleted.
func (w *podWatch) step(refs []podRef) []localapi.PodChange {
	var changes []localapi.PodChange
	now := make(map[string]watched, len(refs))
	for _, r := range refs {
		k := r.key()
		old, seen := w.last[k]
		if seen && old.ref == r {
			now[k] = old
			continue
		}
		it := w.item(r)
		now[k] = watched{ref: r, item: it}
		switch {
		case !seen:
			changes = append(changes, localapi.PodChange{Type: localapi.Added, Item: it})
		case old.item.Error != it.Error || !equality.Semantic.DeepEqual(old.item.Pod, it.Pod):
			changes = append(changes, localapi.PodChange{Type: localapi.Modified, Item: it})
		}
	}
	for k, old := range w.last {
		if _, still := now[k]; !still {
			changes = append(changes, localapi.PodChange{Type: localapi.Deleted, Item: old.item})
		}
	}
	w.last = now
	return changes
}

func (a podsAPI) Logs(ctx context.Context, namespace, name string, opts localapi.LogOptions, w io.Writer) error {
	find := runtimemanager.FindLog
	if opts.Previous {
		find = runtimemanager.FindPreviousLog
	}
	path, err := find(a.n.cfg.RootDir, namespace, name, opts.Container)
	if err != nil {
		if errors.Is(err, runtimemanager.ErrNoLog) {
			return fmt.Errorf("%w: %w", localapi.ErrNotFound, err)
		}
		return err
	}
	copts := crilog.Options{Follow: opts.Follow, Timestamps: opts.Timestamps, Tail: -1}
	if opts.TailLines != nil {
		copts.Tail = int(*opts.TailLines)
	}
	if opts.SinceTime != nil {
		copts.Since = *opts.SinceTime
	}
	if opts.Follow {
		copts.Done = func() bool { return a.logWriterGone(ctx, path) }
	}
	return crilog.Copy(ctx, w, path, copts)
}

// logWriterGone reports whether the container that writes the log file
// at path (<root>/pods/<ns>_<name>_<uid>/<container>/<attempt>.log) has
// exited or is gone, so that following the file may end.
func (a podsAPI) logWriterGone(ctx context.Context, path string) bool {
	attempt, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(path), ".log"), 10, 32)
	if err != nil {
		return false
	}
	container := filepath.Base(filepath.Dir(path))
	podDir := filepath.Base(filepath.Dir(filepath.Dir(path)))
	ns, rest, ok1 := strings.Cut(podDir, "_")
	name, uid, ok2 := strings.Cut(rest, "_")
	if !ok1 || !ok2 {
		return false
	}
	st, err := a.n.runtime.PodStatus(ctx, types.UID(uid), name, ns)
	if err != nil {
		return false // ask again at the next poll
	}
	for _, c := range st.ContainerStatuses {
		if c.Name == container && c.RestartCount == int32(attempt) {
			return c.State == lifecycle.ContainerExited
		}
	}
	return true
}

// eventsAPI serves the local API's event endpoints from the ring.
type eventsAPI struct{ ring *events.Ring }

// Events returns the node's event log for the local API server.
func (n *Node) Events() localapi.Events { return eventsAPI{n.events} }

func (e eventsAPI) List(_ context.Context, f localapi.EventFilter) ([]localapi.Event, error) {
	evs := e.ring.List(events.Filter{Kind: events.Kind(f.Kind), Namespace: f.Namespace, Name: f.Name})
	out := make([]localapi.Event, len(evs))
	for i, ev := range evs {
		out[i] = toAPIEvent(ev)
	}
	return out, nil
}

func (e eventsAPI) Watch(ctx context.Context, f localapi.EventFilter) (<-chan localapi.Event, error) {
	in := e.ring.Watch(ctx)
	out := make(chan localapi.Event, 64)
	go func() {
		defer close(out)
		for ev := range in {
			if api := toAPIEvent(ev); f.Match(api) {
				select {
				case out <- api:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

func toAPIEvent(ev events.Event) localapi.Event {
	return localapi.Event{
		Seq: ev.Seq, Type: ev.Type, Reason: ev.Reason, Message: ev.Message, Count: ev.Count,
		FirstTime: ev.FirstTime, LastTime: ev.LastTime,
		Object: localapi.EventObject{Kind: string(ev.Object.Kind), Namespace: ev.Object.Namespace,
			Name: ev.Object.Name, UID: string(ev.Object.UID)},
	}
}

// NodeInfo is the node's part of GET /v1/node.
func (n *Node) NodeInfo(context.Context) localapi.NodeInfo {
	host, _ := os.Hostname()
	return localapi.NodeInfo{
		Hostname: host, HostVersion: n.cfg.HostVersion, OS: runtime.GOOS, Arch: runtime.GOARCH,
		GoVersion: runtime.Version(), Started: n.started,
	}
}

// SourcesReady reports whether every config source has reported once.
func (n *Node) SourcesReady() bool { return n.desired.SourcesReady() }
