package apisource

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/manifest"
)

// The kinds ApplyObject and DeleteObject take.
const (
	KindConfigMap = "ConfigMap"
	KindSecret    = "Secret"
)

// ApplyObject creates or replaces the one ConfigMap or Secret of kind in
// body (JSON or YAML), decoded, defaulted and validated as the manifest
// directory's are. An update keeps the UID and creation time; applying
// what is stored changes nothing. A request that does not decode or
// validate changes nothing and fails with an [*InvalidError] whose errors
// name the key, never a value.
func (s *Source) ApplyObject(ctx context.Context, kind, where string, body []byte) (ObjectChange, Op, error) {
	obj, err := decodeObject(kind, where, body)
	if err != nil {
		return ObjectChange{}, "", err
	}
	k := obj.Kind + "/" + key(obj.Namespace, obj.Name)
	defer s.keys.lock(k)()
	s.mu.Lock()
	if !s.loaded {
		s.mu.Unlock()
		return ObjectChange{}, "", ErrNotLoaded
	}
	old, exists := s.objectLocked(obj.Kind, obj.Namespace, obj.Name)
	s.mu.Unlock()
	meta := objectMeta(obj)
	meta.ResourceVersion, meta.ManagedFields, meta.Generation = "", nil, 0
	if exists {
		om := objectMeta(old)
		meta.UID, meta.CreationTimestamp = om.UID, om.CreationTimestamp
		if equality.Semantic.DeepEqual(old.ConfigMap, obj.ConfigMap) && equality.Semantic.DeepEqual(old.Secret, obj.Secret) {
			return old, Unchanged, nil
		}
	} else {
		s.mu.Lock() // NewUID need not be safe for concurrent use
		meta.UID = s.opts.NewUID()
		s.mu.Unlock()
		meta.CreationTimestamp = metav1.NewTime(s.opts.Now())
	}
	if err := s.opts.Persister.WriteObject(ctx, obj); err != nil {
		return ObjectChange{}, "", fmt.Errorf("saving %s %s: %w", obj.Kind, key(obj.Namespace, obj.Name), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storeObjectLocked(obj)
	s.publishLocked()
	if exists {
		return obj, Updated, nil
	}
	return obj, Created, nil
}

// DeleteObject removes the ConfigMap or Secret (kind) namespace/name.
func (s *Source) DeleteObject(ctx context.Context, kind, namespace, name string) error {
	if kind != KindConfigMap && kind != KindSecret {
		return fmt.Errorf("deleting %s %s: not a ConfigMap or Secret", kind, key(namespace, name))
	}
	k := kind + "/" + key(namespace, name)
	defer s.keys.lock(k)()
	s.mu.Lock()
	loaded := s.loaded
	_, ok := s.objectLocked(kind, namespace, name)
	s.mu.Unlock()
	if !loaded {
		return ErrNotLoaded
	}
	if !ok {
		return fmt.Errorf("deleting %s %s: %w", kind, key(namespace, name), ErrObjectNotFound)
	}
	gone := ObjectChange{Kind: kind, Namespace: namespace, Name: name}
	if err := s.opts.Persister.WriteObject(ctx, gone); err != nil {
		return fmt.Errorf("deleting %s %s: saving: %w", kind, key(namespace, name), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storeObjectLocked(gone)
	s.publishLocked()
	return nil
}

// ErrObjectNotFound is returned for a ConfigMap or Secret the api source
// does not hold.
var ErrObjectNotFound = errors.New("not found in the api source")

// decodeObject decodes the one object of kind in body with the manifest
// directory's strict decoder, defaults and validation.
func decodeObject(kind, where string, body []byte) (ObjectChange, error) {
	f := manifest.Decode(where, body, "", time.Time{}) // seen is for pods only
	inv := &InvalidError{Where: where, Kind: kind}
	for _, err := range f.Errors {
		var de *manifest.DocumentError
		if errors.As(err, &de) {
			if de.Kind != "" && de.Kind != kind {
				inv.Errs = append(inv.Errs, field.NotSupported(field.NewPath("kind"), de.Kind, []string{kind}))
				continue
			}
			if de.Name != "" {
				inv.Namespace, inv.Name = de.Namespace, de.Name
			}
			err = de.Err
		}
		inv.Errs = append(inv.Errs, asFieldError(err))
	}
	var found []ObjectChange
	for _, c := range f.ConfigMaps {
		found = append(found, ObjectChange{Kind: KindConfigMap, Namespace: c.ConfigMap.Namespace, Name: c.ConfigMap.Name, ConfigMap: c.ConfigMap})
	}
	for _, c := range f.Secrets {
		found = append(found, ObjectChange{Kind: KindSecret, Namespace: c.Secret.Namespace, Name: c.Secret.Name, Secret: c.Secret})
	}
	other := len(f.Pods) + len(f.Volumes) + len(f.Claims)
	found = slices.DeleteFunc(found, func(o ObjectChange) bool {
		if o.Kind != kind {
			inv.Errs = append(inv.Errs, field.NotSupported(field.NewPath("kind"), o.Kind, []string{kind}))
			return true
		}
		return false
	})
	for range other {
		inv.Errs = append(inv.Errs, field.NotSupported(field.NewPath("kind"), "not "+kind, []string{kind}))
	}
	switch {
	case len(found) > 1:
		inv.Errs = append(inv.Errs, field.TooMany(field.NewPath("body"), len(found), 1))
	case len(found) == 0 && len(inv.Errs) == 0:
		inv.Errs = append(inv.Errs, field.Required(field.NewPath("body"), "one "+kind+" (apiVersion v1, kind "+kind+")"))
	}
	if len(found) == 1 && inv.Name == "" {
		inv.Namespace, inv.Name = found[0].Namespace, found[0].Name
	}
	if len(inv.Errs) > 0 {
		return ObjectChange{}, inv
	}
	return found[0], nil
}

// objectMeta is the metadata of the object c holds.
func objectMeta(c ObjectChange) *metav1.ObjectMeta {
	if c.Secret != nil {
		return &c.Secret.ObjectMeta
	}
	return &c.ConfigMap.ObjectMeta
}

// objectLocked returns the stored object of kind namespace/name.
func (s *Source) objectLocked(kind, namespace, name string) (ObjectChange, bool) {
	k := key(namespace, name)
	if kind == KindSecret {
		sec, ok := s.secrets[k]
		return ObjectChange{Kind: kind, Namespace: namespace, Name: name, Secret: sec}, ok
	}
	cm, ok := s.configMaps[k]
	return ObjectChange{Kind: kind, Namespace: namespace, Name: name, ConfigMap: cm}, ok
}

// storeObjectLocked stores c, or removes its record when it holds none.
func (s *Source) storeObjectLocked(c ObjectChange) {
	k := key(c.Namespace, c.Name)
	switch {
	case c.ConfigMap != nil:
		s.configMaps[k] = c.ConfigMap.DeepCopy()
	case c.Secret != nil:
		s.secrets[k] = c.Secret.DeepCopy()
	case c.Kind == KindSecret:
		delete(s.secrets, k)
	default:
		delete(s.configMaps, k)
	}
}

// publishObjectsLocked adds the stored objects to snap, sorted.
func (s *Source) publishObjectsLocked(snap *sources.Snapshot) {
	for _, k := range slices.Sorted(maps.Keys(s.configMaps)) {
		snap.ConfigMaps = append(snap.ConfigMaps, sources.ConfigMap{ConfigMap: s.configMaps[k].DeepCopy(), Origin: sources.Origin{
			Source: sources.SourceAPI, Key: "ConfigMap/" + k, Where: "api configmap " + k}})
	}
	for _, k := range slices.Sorted(maps.Keys(s.secrets)) {
		snap.Secrets = append(snap.Secrets, sources.Secret{Secret: s.secrets[k].DeepCopy(), Origin: sources.Origin{
			Source: sources.SourceAPI, Key: "Secret/" + k, Where: "api secret " + k}})
	}
}
