package node

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/apisource"
	"github.com/podhost/podhost/sources/manifest"
)

// jitter spreads pod re-syncs: a duration in [d, d+d*factor).
func jitter(d time.Duration, factor float64) time.Duration {
	if factor <= 0 {
		return d
	}
	return d + time.Duration(rand.Float64()*factor*float64(d))
}

// nodeResolvConf reads the node's DNS for pods with dnsPolicy Default.
func nodeResolvConf(log hclog.Logger) *runtimemanager.ResolvConf {
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		log.Warn("reading the node's resolv.conf; pods with dnsPolicy Default get the runtime's DNS", "err", err)
		return nil
	}
	rc := runtimemanager.ParseResolvConf(b)
	return &rc
}

// manifestSource adapts the static pod directory to Source.
type manifestSource struct{ *manifest.Source }

func (manifestSource) Name() string { return sources.SourceFile }

func (s manifestSource) Run(ctx context.Context) error { return s.Source.Run(ctx) }

// Pod, MirrorPod and StaticPodUID make the desired set the status manager's
// lifecycle.PodLookup. podhost keeps no mirror pods.
func (d *desiredSet) Pod(uid types.UID) (*v1.Pod, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	p, ok := d.byUID[uid]
	return p, ok
}

// A static pod's status goes to its mirror pod in the API server once one
// exists (Kubernetes mode). Until then, and with no API server at all, the
// local store keeps it under the static pod itself: the static pod is its
// own mirror.
func (d *desiredSet) MirrorPod(static *v1.Pod) (*v1.Pod, bool) {
	if m, ok := d.apiMirror(static); ok {
		return m, true
	}
	return d.Pod(static.UID)
}

// apiMirror is the static pod's mirror in the API server, if any.
func (d *desiredSet) apiMirror(static *v1.Pod) (*v1.Pod, bool) {
	if d.mirrors == nil || static == nil {
		return nil, false
	}
	return d.mirrors.Mirror(static.Namespace, static.Name)
}

func (d *desiredSet) StaticPodUID(mirror types.UID) (types.UID, bool) {
	if d.mirrors != nil {
		for _, m := range d.mirrors.Mirrors() {
			if m.UID != mirror {
				continue
			}
			d.mu.RLock()
			defer d.mu.RUnlock()
			for _, p := range d.pods {
				if p.Namespace == m.Namespace && p.Name == m.Name {
					return p.UID, true
				}
			}
			return "", false
		}
	}
	_, ok := d.Pod(mirror)
	return mirror, ok
}

// apiSource adapts the local API's pods to Source; they are loaded by New.
type apiSource struct{ *apisource.Source }

func (apiSource) Name() string { return sources.SourceAPI }

func (apiSource) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// apiPersister keeps the API's pods in the state database.
type apiPersister struct{ store *state.Store }

func (p apiPersister) Write(ctx context.Context, c apisource.Change) error {
	return p.store.WriteAPIPod(ctx, state.APIPodChange{Namespace: c.Namespace, Name: c.Name, Pod: c.Pod})
}

func (p apiPersister) Load(ctx context.Context) ([]*v1.Pod, error) { return p.store.LoadAPIPods(ctx) }

func (p apiPersister) WriteObject(ctx context.Context, c apisource.ObjectChange) error {
	var obj *state.APIObject
	if c.ConfigMap != nil || c.Secret != nil {
		obj = &state.APIObject{ConfigMap: c.ConfigMap, Secret: c.Secret}
	}
	return p.store.WriteAPIObject(ctx, c.Kind, c.Namespace, c.Name, obj)
}

func (p apiPersister) LoadObjects(ctx context.Context) ([]apisource.ObjectChange, error) {
	objs, err := p.store.LoadAPIObjects(ctx)
	out := make([]apisource.ObjectChange, 0, len(objs))
	for _, o := range objs {
		if o.Secret != nil {
			out = append(out, apisource.ObjectChange{Kind: apisource.KindSecret, Namespace: o.Secret.Namespace, Name: o.Secret.Name, Secret: o.Secret})
		} else {
			out = append(out, apisource.ObjectChange{Kind: apisource.KindConfigMap, Namespace: o.ConfigMap.Namespace, Name: o.ConfigMap.Name, ConfigMap: o.ConfigMap})
		}
	}
	return out, err
}

// statusSink is the state database as the status manager's sink; deleting
// a finished pod also ends it in the API source, which held it until then
// (a pod deleted through the API stays desired, terminating, until its
// containers are gone).
type statusSink struct {
	*state.Store
	api     *apisource.Source
	desired *desiredSet
}

// Get returns the stored pod with what only the config knows: its spec and
// whether it was deleted, as the API server would answer.
func (s statusSink) Get(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	pod, err := s.Store.Get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if want, ok := s.desired.Pod(pod.UID); ok {
		pod.Spec = want.Spec
		pod.Labels, pod.Annotations = want.Labels, want.Annotations
		pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = want.DeletionTimestamp, want.DeletionGracePeriodSeconds
	}
	return pod, nil
}

func (s statusSink) Delete(ctx context.Context, namespace, name string, uid types.UID) error {
	if err := s.Store.Delete(ctx, namespace, name, uid); err != nil {
		return err
	}
	if err := s.api.Remove(ctx, namespace, name, uid); err != nil && !errors.Is(err, apisource.ErrNotFound) {
		return fmt.Errorf("removing deleted pod from the api source: %w", err)
	}
	return nil
}
