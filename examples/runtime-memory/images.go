package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// PullPolicy says when EnsureImage pulls.
type PullPolicy int

// The pull policies.
const (
	PullIfNotPresent PullPolicy = iota
	PullAlways
	PullNever
)

// Image is one image present in the runtime.
type Image struct {
	Name string
	Ref  string
}

// imageRef returns the reference of a present image, by name or by
// reference; mu is held.
func (m *memory) imageRef(image string) (string, bool) {
	if ref, ok := m.images[image]; ok {
		return ref, true
	}
	for _, ref := range m.images {
		if ref == image {
			return ref, true
		}
	}
	return "", false
}

// EnsureImage makes image present according to policy. Pulling is pretend:
// any name can be pulled unless the runtime is offline or the registry is
// under the reserved ".invalid" domain. It returns the image's reference
// and whether it was pulled.
func (m *memory) EnsureImage(_ context.Context, image string, policy PullPolicy) (string, bool, error) {
	if image == "" {
		return "", false, fmt.Errorf("image is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ref, present := m.imageRef(image)
	if present && policy != PullAlways {
		return ref, false, nil
	}
	if policy == PullNever {
		return "", false, fmt.Errorf("image %q is absent and the pull policy is Never: %w", image, errNotFound)
	}
	if m.offline || unpullable(image) {
		return "", false, fmt.Errorf("pulling image %q: %w", image, errNotFound)
	}
	ref = referenceOf(image)
	m.images[image] = ref
	return ref, true, nil
}

// ImageStatus returns an image and whether it is present.
func (m *memory) ImageStatus(_ context.Context, image string) (Image, bool, error) {
	if image == "" {
		return Image{}, false, fmt.Errorf("image is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ref, ok := m.imageRef(image)
	return Image{Name: image, Ref: ref}, ok, nil
}

// ListImages returns the present images by name.
func (m *memory) ListImages(context.Context) []Image {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Image
	for _, name := range slices.Sorted(maps.Keys(m.images)) {
		out = append(out, Image{Name: name, Ref: m.images[name]})
	}
	return out
}

// RemoveImage removes an image unless a container uses it. Removing an
// absent image succeeds.
func (m *memory) RemoveImage(_ context.Context, image string) error {
	if image == "" {
		return fmt.Errorf("image is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ref, ok := m.imageRef(image)
	if !ok {
		return nil
	}
	for _, c := range m.containers {
		if c.ImageRef == ref {
			return fmt.Errorf("image %q is used by container %q: %w", image, c.ID, errPrecondition)
		}
	}
	for name, r := range m.images {
		if r == ref {
			delete(m.images, name)
		}
	}
	return nil
}

// configure makes images present without pulling and sets whether pulls
// are refused; Configure calls it once a config is accepted.
func (m *memory) configure(images []string, offline bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, name := range images {
		if _, ok := m.images[name]; !ok {
			m.images[name] = referenceOf(name)
		}
	}
	m.offline = offline
}

// referenceOf is the made-up digest reference of an image name.
func referenceOf(image string) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(image)))
}

// unpullable reports whether image names a registry under ".invalid", which
// never exists (RFC 2606).
func unpullable(image string) bool {
	registry, _, found := strings.Cut(image, "/")
	host, _, _ := strings.Cut(registry, ":")
	return found && (host == "invalid" || strings.HasSuffix(host, ".invalid"))
}
