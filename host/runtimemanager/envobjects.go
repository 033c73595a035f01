package runtimemanager

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// EnvObjects reads the ConfigMaps and Secrets a container's env names
// (configMapKeyRef, secretKeyRef, envFrom): from the API server with the
// node's credentials, whose Node authorizer lets it read those its pods
// name, or from the objects the host's sources define. A missing object
// is an error apierrors.IsNotFound reports.
type EnvObjects interface {
	ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*v1.Secret, error)
	// Services lists a namespace's services, for the service links
	// (servicelinks.go).
	Services(ctx context.Context, namespace string) ([]v1.Service, error)
}

// envObjects are the ConfigMaps and Secrets of one container's env, each
// read at most once, as the kubelet resolves them when it makes the
// container's environment. A missing object that is optional resolves to
// nothing; one that is not is the reader's error (`configmaps "x" not
// found`), which keeps the container from being created
// (CreateContainerConfigError).
type envObjects struct {
	ctx        context.Context
	src        EnvObjects // nil: nowhere to read from
	namespace  string
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
}

func newEnvObjects(ctx context.Context, src EnvObjects, namespace string) *envObjects {
	return &envObjects{ctx: ctx, src: src, namespace: namespace, configMaps: map[string]*v1.ConfigMap{}, secrets: map[string]*v1.Secret{}}
}

// data is the data of ConfigMap (secret false) or Secret name as strings;
// ok is false when it is missing and optional.
func (o *envObjects) data(secret bool, name string, optional bool) (map[string]string, bool, error) {
	kind := "configMap"
	if secret {
		kind = "secret"
	}
	if o.src == nil {
		return nil, false, fmt.Errorf("couldn't get %s %s/%s: the node has nowhere to read it from", kind, o.namespace, name)
	}
	var err error
	out := map[string]string{}
	if secret {
		s, ok := o.secrets[name]
		if !ok {
			if s, err = o.src.Secret(o.ctx, o.namespace, name); err != nil {
				return nil, false, notFoundOptional(err, optional)
			}
			o.secrets[name] = s
		}
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, true, nil
	}
	cm, ok := o.configMaps[name]
	if !ok {
		if cm, err = o.src.ConfigMap(o.ctx, o.namespace, name); err != nil {
			return nil, false, notFoundOptional(err, optional)
		}
		o.configMaps[name] = cm
	}
	return cm.Data, true, nil
}

// notFoundOptional is nil for a missing optional object, else err.
func notFoundOptional(err error, optional bool) error {
	if apierrors.IsNotFound(err) && optional {
		return nil
	}
	return err
}

// envFrom are the variables of the container's envFrom, in its order and
// each source's keys sorted, a later source's value replacing an earlier
// one's.
func (o *envObjects) envFrom(spec *v1.Container) ([]keyValue, error) {
	var out []keyValue
	seen := map[string]int{}
	for _, src := range spec.EnvFrom {
		var data map[string]string
		var ok bool
		var err error
		switch {
		case src.ConfigMapRef != nil:
			data, ok, err = o.data(false, src.ConfigMapRef.Name, src.ConfigMapRef.Optional != nil && *src.ConfigMapRef.Optional)
		case src.SecretRef != nil:
			data, ok, err = o.data(true, src.SecretRef.Name, src.SecretRef.Optional != nil && *src.SecretRef.Optional)
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			name := src.Prefix + k
			if i, dup := seen[name]; dup {
				out[i].value = data[k]
				continue
			}
			seen[name] = len(out)
			out = append(out, keyValue{name, data[k]})
		}
	}
	return out, nil
}

// keyRef is the value a configMapKeyRef or secretKeyRef names; ok is false
// when the object or the key is missing and the reference optional.
func (o *envObjects) keyRef(src *v1.EnvVarSource) (string, bool, error) {
	secret, name, key, optional := false, "", "", false
	switch {
	case src.ConfigMapKeyRef != nil:
		r := src.ConfigMapKeyRef
		name, key, optional = r.Name, r.Key, r.Optional != nil && *r.Optional
	case src.SecretKeyRef != nil:
		r := src.SecretKeyRef
		secret, name, key, optional = true, r.Name, r.Key, r.Optional != nil && *r.Optional
	default:
		return "", false, fmt.Errorf("not a ConfigMap or Secret key reference")
	}
	data, ok, err := o.data(secret, name, optional)
	if err != nil || !ok {
		return "", false, err
	}
	v, ok := data[key]
	switch {
	case ok:
		return v, true, nil
	case optional:
		return "", false, nil
	case secret:
		return "", false, fmt.Errorf("couldn't find key %s in Secret %s/%s", key, o.namespace, name)
	}
	return "", false, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", key, o.namespace, name)
}

// keyValue is one variable.
type keyValue struct{ key, value string }

// LastGood wraps src (the API server) as described at lastGood.
func LastGood(src EnvObjects) EnvObjects { return &lastGood{src: src} }

// lastGood keeps the last answer for each ConfigMap, Secret and namespace's
// services and gives it when a read fails for another reason than the
// object being gone, so that an API server out of reach does not keep
// containers from being created or restarted (the kubelet reads these
// from caches fed by watches, which outlive an outage too). An object
// never read has nothing to fall back on: the error stands; one the API
// server says is gone is gone.
type lastGood struct {
	src        EnvObjects
	mu         sync.Mutex
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
	services   map[string][]v1.Service
}

// remember answers with the last good value of key in m when err is not
// a NotFound and one is known, and records a good value.
func remember[T any](mu *sync.Mutex, m *map[string]T, key string, v T, err error) (T, error) {
	mu.Lock()
	defer mu.Unlock()
	switch {
	case err == nil:
		if *m == nil {
			*m = map[string]T{}
		}
		(*m)[key] = v
	case apierrors.IsNotFound(err):
		delete(*m, key)
	default:
		if last, ok := (*m)[key]; ok {
			return last, nil
		}
	}
	return v, err
}

func (l *lastGood) ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error) {
	v, err := l.src.ConfigMap(ctx, namespace, name)
	return remember(&l.mu, &l.configMaps, namespace+"/"+name, v, err)
}

func (l *lastGood) Secret(ctx context.Context, namespace, name string) (*v1.Secret, error) {
	v, err := l.src.Secret(ctx, namespace, name)
	return remember(&l.mu, &l.secrets, namespace+"/"+name, v, err)
}

func (l *lastGood) Services(ctx context.Context, namespace string) ([]v1.Service, error) {
	v, err := l.src.Services(ctx, namespace)
	return remember(&l.mu, &l.services, namespace, v, err)
}
