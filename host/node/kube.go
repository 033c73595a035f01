package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"

	"github.com/podhost/podhost/host/kubestatus"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/kubesource"
)

// Kubernetes mode: the node runs the pods a Kubernetes API server binds to
// it (sources/kubesource) and reports their status there
// (host/kubestatus). Pods of the other sources keep the state database as
// their sink; the database also records the statuses of API-server pods,
// so that a restarted host finds what it wrote last.

// KubeConfig joins the node to a Kubernetes API server; the zero value
// leaves it out.
type KubeConfig struct {
	// Client reaches the API server with the node's own credentials
	// (system:node:NAME).
	Client kubernetes.Interface
	// Server, when set, is the daemon endpoint the node serves and
	// advertises in its Node status (kubectl logs).
	Server *KubeServer
	// Labels are set on the Node besides the kubelet's own.
	Labels map[string]string
}

func (k KubeConfig) enabled() bool { return k.Client != nil }

// kubeParts are the node's Kubernetes-mode parts; nil outside it.
type kubeParts struct {
	source *kubesource.Source
	sink   *kubestatus.Sink
	// rejected are the API-server pods failed by rejectAPIPods, with what
	// was done (see rejectAPIPods).
	mu       sync.Mutex
	rejected map[types.UID]string
	wg       sync.WaitGroup
	// agent registers the Node and keeps its status and Lease.
	agent *kubeAgent
	// mirrorSeen is each static pod's mirror as last seen (mirrorSyncs).
	mirrorSeen map[types.UID]string
	// runtimeType is the type the container IDs carry in the API server.
	runtimeType runtimeTypeCache
}

// runtimeTypeCache keeps the container runtime's type, the runtime
// plugin's name ("containerd"), from its first answer: the container IDs
// must not change form in the API server during a run.
type runtimeTypeCache struct {
	ask func(ctx context.Context) (string, error)
	mu  sync.Mutex
	typ string
}

func (c *runtimeTypeCache) get(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.typ != "" {
		return c.typ, nil
	}
	typ, err := c.ask(ctx)
	if err != nil {
		return "", err
	}
	if typ == "" {
		return "", errors.New("the runtime plugin reports no runtime name")
	}
	c.typ = typ
	return typ, nil
}

// newKube builds the Kubernetes-mode parts, or nil outside it.
// runtimeType asks the runtime plugin for its type.
func newKube(cfg Config, runtimeType func(ctx context.Context) (string, error)) *kubeParts {
	if !cfg.Kubernetes.enabled() {
		return nil
	}
	k := &kubeParts{
		source:      kubesource.New(kubesource.Options{Client: cfg.Kubernetes.Client, NodeName: cfg.NodeName}),
		rejected:    map[types.UID]string{},
		runtimeType: runtimeTypeCache{ask: runtimeType},
	}
	k.sink = kubestatus.New(cfg.Kubernetes.Client, k.runtimeType.get)
	return k
}

// statusSink is the status manager's sink: the state database, and in
// Kubernetes mode the API server for the pods that came from it.
func (n *Node) statusSink() lifecycle.StatusSink {
	local := statusSink{n.store, n.api, n.desired}
	if n.kube == nil {
		return local
	}
	return routedSink{local: local, kube: n.kube, desired: n.desired, log: n.log}
}

// routedSink sends each pod's status to the sink of the source it came
// from.
type routedSink struct {
	local   statusSink
	kube    *kubeParts
	desired *desiredSet
	log     interface {
		Debug(msg string, args ...any)
	}
}

// fromAPIServer tells whether the pod under namespace/name is the API
// server's: the desired set says which source holds the name; a name no
// longer desired is the API server's while its informer still has it.
func (s routedSink) fromAPIServer(namespace, name string) bool {
	if o, ok := s.desired.originOf(namespace, name); ok {
		return o.Source == sources.SourceAPIServer
	}
	_, ok := s.kube.source.Get(namespace, name)
	return ok
}

func (s routedSink) Get(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if _, _, ok := s.staticWithMirror(namespace, name); ok {
		return s.kube.sink.Get(ctx, namespace, name) // the mirror, which holds the static pod's status
	}
	if s.fromAPIServer(namespace, name) {
		return s.kube.sink.Get(ctx, namespace, name)
	}
	return s.local.Get(ctx, namespace, name)
}

// Put writes an API-server pod's status to the API server, then to the
// state database.
func (s routedSink) Put(ctx context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error {
	if static, m, ok := s.staticWithMirror(namespace, name); ok && m.UID == uid {
		// A static pod's status: to its mirror, and to the state database
		// under the static pod, which a restarted host reads.
		if err := s.kube.sink.Put(ctx, namespace, name, uid, status); err != nil {
			return err
		}
		if err := s.local.Store.Put(ctx, namespace, name, static, status); err != nil {
			s.log.Debug("recording the status of a static pod locally", "pod", namespace+"/"+name, "uid", static, "err", err)
		}
		return nil
	}
	if !s.fromAPIServer(namespace, name) {
		return s.local.Put(ctx, namespace, name, uid, status)
	}
	if err := s.kube.sink.Put(ctx, namespace, name, uid, status); err != nil {
		return err
	}
	if err := s.local.Store.Put(ctx, namespace, name, uid, status); err != nil {
		s.log.Debug("recording the status of an api server pod locally", "pod", namespace+"/"+name, "uid", uid, "err", err)
	}
	return nil
}

// Forget ends a sync of the pod in both sinks: either may have read it.
func (s routedSink) Forget(uid types.UID) {
	s.kube.sink.Forget(uid)
	s.local.Forget(uid)
}

// Delete deletes an API-server pod from the API server, then its record.
func (s routedSink) Delete(ctx context.Context, namespace, name string, uid types.UID) error {
	if !s.fromAPIServer(namespace, name) {
		return s.local.Delete(ctx, namespace, name, uid)
	}
	if err := s.kube.sink.Delete(ctx, namespace, name, uid); err != nil {
		return err
	}
	if err := s.local.Store.Delete(ctx, namespace, name, uid); err != nil && !errors.Is(err, lifecycle.ErrNotFound) {
		s.log.Debug("removing the record of a deleted api server pod", "pod", namespace+"/"+name, "uid", uid, "err", err)
	}
	return nil
}

// originOf returns the origin of the desired pod under namespace/name.
func (d *desiredSet) originOf(namespace, name string) (sources.Origin, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, p := range d.pods {
		if p.Namespace == namespace && p.Name == name {
			o, ok := d.origins[p.UID]
			return o, ok
		}
	}
	return sources.Origin{}, false
}

// Reasons of API-server pods the node refuses to run.
const (
	ReasonUnsupportedVolume = "UnsupportedVolume"
	ReasonInvalidPod        = "InvalidPod"
	ReasonNameConflict      = "NameConflict"
)

// rejectAPIPods fails, in the API server, the pods of the API server that
// the merger rejected, and deletes those marked for deletion (nothing of
// them ran). A pod its worker knows (one that ran and then turned invalid)
// is left to the worker and the status manager. Each pod is handled again only when what is to be done changes
// (it gets marked for deletion) or the last attempt failed.
func (n *Node) rejectAPIPods(ctx context.Context, rejected []sources.Rejected) {
	if n.kube == nil {
		return
	}
	k := n.kube
	k.mu.Lock()
	defer k.mu.Unlock()
	present := map[types.UID]bool{}
	for _, r := range rejected {
		pod := r.Pod.Pod
		if r.Pod.Origin.Source != sources.SourceAPIServer {
			continue
		}
		if _, known := n.core.Inspect(pod.UID); known {
			continue // its worker owns it, and its status
		}
		present[pod.UID] = true
		reason, message := rejection(pod, r.Err)
		step := reason + "/" + message
		if pod.DeletionTimestamp != nil {
			step += "/delete"
		}
		if k.rejected[pod.UID] == step {
			continue
		}
		k.rejected[pod.UID] = step
		k.wg.Add(1)
		go func() {
			defer k.wg.Done()
			if err := k.sink.Reject(ctx, pod, reason, message); err != nil {
				n.log.Warn("failing a rejected pod in the api server", "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID, "err", err)
				k.mu.Lock()
				if k.rejected[pod.UID] == step {
					delete(k.rejected, pod.UID)
				}
				k.mu.Unlock()
			}
		}()
	}
	for uid := range k.rejected {
		if !present[uid] {
			delete(k.rejected, uid)
		}
	}
}

// rejection is the reason and message a rejected pod fails with. Field
// errors under spec.volumes[i] name the volume.
func rejection(pod *v1.Pod, err error) (reason, message string) {
	if errors.Is(err, sources.ErrConflict) {
		return ReasonNameConflict, "Pod was rejected: " + err.Error()
	}
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		return ReasonInvalidPod, "Pod was rejected: " + err.Error()
	}
	reason = ReasonInvalidPod
	var parts []string
	for _, e := range agg.Errors() {
		var fe *field.Error
		if !errors.As(e, &fe) {
			parts = append(parts, e.Error())
			continue
		}
		if i, ok := volumeIndex(fe.Field); ok && i < len(pod.Spec.Volumes) {
			if fe.Type == field.ErrorTypeForbidden {
				reason = ReasonUnsupportedVolume
			}
			parts = append(parts, fmt.Sprintf("volume %q: %s", pod.Spec.Volumes[i].Name, fe.Error()))
			continue
		}
		parts = append(parts, fe.Error())
	}
	return reason, "Pod was rejected: " + strings.Join(parts, "; ")
}

// volumeIndex returns i of a field path spec.volumes[i]….
func volumeIndex(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, "spec.volumes[")
	if !ok {
		return 0, false
	}
	var i int
	if _, err := fmt.Sscanf(rest, "%d]", &i); err != nil {
		return 0, false
	}
	return i, true
}
