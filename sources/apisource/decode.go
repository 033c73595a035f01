package apisource

import (
	"errors"
	"regexp"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podhost/podhost/sources/manifest"
)

// strictField finds the path in the strict decoder's "unknown field" and
// "duplicate field" errors.
var strictField = regexp.MustCompile(`^(unknown|duplicate) field "([^"]+)"$`)

// decodePod decodes, defaults and validates the one Pod in body with the
// manifest directory's strict decoder. The pod's UID and static-pod
// annotations are the caller's to set.
func decodePod(where string, body []byte, now time.Time) (*v1.Pod, error) {
	f := manifest.Decode(where, body, "", now)
	inv := &InvalidError{Where: where}
	wrongKind := map[int]bool{}
	for _, err := range f.Errors {
		var de *manifest.DocumentError
		if errors.As(err, &de) {
			if de.Kind != "" && de.Kind != "Pod" {
				// Only the kind matters for what is not a pod.
				if !wrongKind[de.Document] {
					wrongKind[de.Document] = true
					inv.Errs = append(inv.Errs, field.NotSupported(field.NewPath("kind"), de.Kind, []string{"Pod"}))
				}
				continue
			}
			if de.Name != "" {
				inv.Namespace, inv.Name = de.Namespace, de.Name
			}
			err = de.Err
		}
		inv.Errs = append(inv.Errs, asFieldError(err))
	}
	for range f.Volumes {
		inv.Errs = append(inv.Errs, field.NotSupported(field.NewPath("kind"), "PersistentVolume", []string{"Pod"}))
	}
	for range f.Claims {
		inv.Errs = append(inv.Errs, field.NotSupported(field.NewPath("kind"), "PersistentVolumeClaim", []string{"Pod"}))
	}
	for range f.ConfigMaps {
		inv.Errs = append(inv.Errs, field.NotSupported(field.NewPath("kind"), "ConfigMap", []string{"Pod"}))
	}
	for range f.Secrets {
		inv.Errs = append(inv.Errs, field.NotSupported(field.NewPath("kind"), "Secret", []string{"Pod"}))
	}
	switch {
	case len(f.Pods) > 1:
		inv.Errs = append(inv.Errs, field.TooMany(field.NewPath("body"), len(f.Pods), 1))
	case len(f.Pods) == 0 && len(inv.Errs) == 0:
		inv.Errs = append(inv.Errs, field.Required(field.NewPath("body"), "one Pod (apiVersion v1, kind Pod)"))
	}
	if len(f.Pods) == 1 && inv.Name == "" {
		inv.Namespace, inv.Name = f.Pods[0].Pod.Namespace, f.Pods[0].Pod.Name
	}
	if len(inv.Errs) > 0 {
		return nil, inv
	}
	return f.Pods[0].Pod, nil
}

// asFieldError turns the strict decoder's unknown and duplicate field
// errors into field errors; others pass unchanged.
func asFieldError(err error) error {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe
	}
	if m := strictField.FindStringSubmatch(err.Error()); m != nil {
		return &field.Error{Type: field.ErrorTypeForbidden, Field: m[2], Detail: m[1] + " field", BadValue: nil}
	}
	return err
}
