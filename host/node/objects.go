package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/apisource"
)

// Where a pod's ConfigMaps and Secrets come from, for its env and its
// configMap, secret and projected volumes: a pod of the API server reads
// them from the API server with the node's credentials
// (apiVolumeClient); every other pod, a static pod in Kubernetes mode
// included, from the ConfigMaps and Secrets of the manifest directory and
// the local API (staticObjects), as its claims resolve (volumeclaims.go).
// Both sit behind the same interfaces (apivolumes.Client,
// runtimemanager.EnvObjects), so the volume and env code is one path.

// staticObjects holds the ConfigMaps and Secrets the sources define, by
// namespace/name; a missing one is the API server's NotFound, which
// optional references take as nothing.
type staticObjects struct {
	mu         sync.RWMutex
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
	// info lists them for the local API, keys without values.
	configMapInfo, secretInfo []localapi.ObjectInfo
}

// set takes the ConfigMaps and Secrets of a merged desired state and
// reports whether any changed.
func (o *staticObjects) set(d sources.Desired) bool {
	cms := make(map[string]*v1.ConfigMap, len(d.ConfigMaps))
	var cmInfo, secretInfo []localapi.ObjectInfo
	for _, c := range d.ConfigMaps {
		cms[c.ConfigMap.Namespace+"/"+c.ConfigMap.Name] = c.ConfigMap
		keys := slices.Concat(slices.Collect(maps.Keys(c.ConfigMap.Data)), slices.Collect(maps.Keys(c.ConfigMap.BinaryData)))
		cmInfo = append(cmInfo, objectInfo(c.ConfigMap.ObjectMeta, keys, "", c.Origin))
	}
	secrets := make(map[string]*v1.Secret, len(d.Secrets))
	for _, s := range d.Secrets {
		secrets[s.Secret.Namespace+"/"+s.Secret.Name] = s.Secret
		secretInfo = append(secretInfo, objectInfo(s.Secret.ObjectMeta, slices.Collect(maps.Keys(s.Secret.Data)), string(s.Secret.Type), s.Origin))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	changed := !apiequality.Semantic.DeepEqual(o.configMaps, cms) || !apiequality.Semantic.DeepEqual(o.secrets, secrets)
	o.configMaps, o.secrets = cms, secrets
	o.configMapInfo, o.secretInfo = cmInfo, secretInfo
	return changed
}

// objectInfo is what the local API shows of an object: never a value.
func objectInfo(meta metav1.ObjectMeta, keys []string, typ string, o sources.Origin) localapi.ObjectInfo {
	slices.Sort(keys)
	return localapi.ObjectInfo{Namespace: meta.Namespace, Name: meta.Name, Keys: keys, Type: typ, Source: o.Source, Where: o.Where}
}

// ConfigMapInfo lists the ConfigMaps for the local API, in the merged
// set's order (namespace/name).
func (o *staticObjects) ConfigMapInfo() []localapi.ObjectInfo {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return slices.Clone(o.configMapInfo)
}

// SecretInfo lists the Secrets for the local API: their keys, never
// their values.
func (o *staticObjects) SecretInfo() []localapi.ObjectInfo {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return slices.Clone(o.secretInfo)
}

// ConfigMap returns a copy of the ConfigMap namespace/name.
func (o *staticObjects) ConfigMap(_ context.Context, namespace, name string) (*v1.ConfigMap, error) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if cm, ok := o.configMaps[namespace+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

// Secret returns a copy of the Secret namespace/name.
func (o *staticObjects) Secret(_ context.Context, namespace, name string) (*v1.Secret, error) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if s, ok := o.secrets[namespace+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

// errNoToken is why a pod that is not the API server's gets no
// service-account token (admission refuses such projections already).
var errNoToken = errors.New("service-account tokens are issued by the API server, and the pod is not its")

// localReader reads a pod's ConfigMaps and Secrets from the sources'
// objects; its services, for the service links, from the API server when
// there is one (the kubelet gives static pods the links too), else none.
type localReader struct {
	*staticObjects
	services runtimemanager.EnvObjects // the API server's; nil outside Kubernetes mode
}

func (r localReader) Services(ctx context.Context, namespace string) ([]v1.Service, error) {
	if r.services == nil {
		return nil, nil
	}
	return r.services.Services(ctx, namespace)
}

func (r localReader) CreateToken(context.Context, string, string, *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return nil, errNoToken
}

// unreadable answers for a pod that is no longer desired: its source is not
// known any more, so nothing is read for it.
type unreadable struct{ err error }

func (g unreadable) ConfigMap(context.Context, string, string) (*v1.ConfigMap, error) {
	return nil, g.err
}
func (g unreadable) Secret(context.Context, string, string) (*v1.Secret, error) { return nil, g.err }
func (g unreadable) Services(context.Context, string) ([]v1.Service, error)     { return nil, g.err }
func (g unreadable) CreateToken(context.Context, string, string, *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return nil, g.err
}

// podObjects chooses, per pod, where its objects are read: see above.
type podObjects struct {
	local  localReader
	api    *apiVolumeClient // nil outside Kubernetes mode
	apiEnv runtimemanager.EnvObjects
	origin func(pod *v1.Pod) (sources.Origin, bool)
}

// fromAPIServer reports whether pod is the API server's; a pod no longer
// desired is neither (errors in unreadable).
func (p podObjects) fromAPIServer(pod *v1.Pod) (bool, error) {
	o, ok := p.origin(pod)
	if !ok {
		return false, fmt.Errorf("pod %s/%s (%s) is not desired: its ConfigMaps and Secrets are not read", pod.Namespace, pod.Name, pod.UID)
	}
	if o.Source == sources.SourceAPIServer {
		if p.api == nil {
			return false, fmt.Errorf("pod %s/%s is the API server's and the node has no API server client", pod.Namespace, pod.Name)
		}
		return true, nil
	}
	return false, nil
}

// volumes is where pod's projected, configMap and secret volumes read.
func (p podObjects) volumes(pod *v1.Pod) apivolumes.Client {
	api, err := p.fromAPIServer(pod)
	switch {
	case err != nil:
		return unreadable{err}
	case api:
		return *p.api
	}
	return p.local
}

// env is where the env of pod's containers reads.
func (p podObjects) env(pod *v1.Pod) runtimemanager.EnvObjects {
	api, err := p.fromAPIServer(pod)
	switch {
	case err != nil:
		return unreadable{err}
	case api:
		return p.apiEnv
	}
	return p.local
}

// ConfigMaps lists the sources' ConfigMaps for the local API.
func (n *Node) ConfigMaps() []localapi.ObjectInfo { return n.objects.ConfigMapInfo() }

// Secrets lists the sources' Secrets for the local API: keys, no values.
func (n *Node) Secrets() []localapi.ObjectInfo { return n.objects.SecretInfo() }

// Objects serves the local API's ConfigMaps and Secrets (apisource).
func (n *Node) Objects() localapi.Objects { return objectsAPI{n} }

type objectsAPI struct{ n *Node }

func (a objectsAPI) Apply(ctx context.Context, kind, where string, body []byte) (localapi.ObjectInfo, string, error) {
	c, op, err := a.n.api.ApplyObject(ctx, kind, where, body)
	if err != nil {
		var inv *apisource.InvalidError
		if errors.As(err, &inv) { // names keys, never values
			a.n.log.Warn("object refused", "source", where, "kind", kind, "name", inv.Namespace+"/"+inv.Name, "err", inv)
		}
		return localapi.ObjectInfo{}, "", apiError(err)
	}
	origin := sources.Origin{Source: sources.SourceAPI, Where: "api " + strings.ToLower(kind) + " " + c.Namespace + "/" + c.Name}
	if c.Secret != nil {
		return objectInfo(c.Secret.ObjectMeta, slices.Collect(maps.Keys(c.Secret.Data)), string(c.Secret.Type), origin), string(op), nil
	}
	keys := slices.Concat(slices.Collect(maps.Keys(c.ConfigMap.Data)), slices.Collect(maps.Keys(c.ConfigMap.BinaryData)))
	return objectInfo(c.ConfigMap.ObjectMeta, keys, "", origin), string(op), nil
}

func (a objectsAPI) Delete(ctx context.Context, kind, namespace, name string) error {
	err := a.n.api.DeleteObject(ctx, kind, namespace, name)
	if errors.Is(err, apisource.ErrObjectNotFound) {
		return fmt.Errorf("%w: %w", localapi.ErrNotFound, err)
	}
	return apiError(err)
}
