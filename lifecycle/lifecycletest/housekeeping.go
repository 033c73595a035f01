package lifecycletest

import (
	"context"
	"fmt"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

// FakePodDirs is an in-memory set of pod directories. A directory with a
// mounted volume cannot be removed.
type FakePodDirs struct {
	mu      sync.Mutex
	dirs    map[types.UID]bool // uid -> volume mounted
	ListErr error
}

// NewFakePodDirs returns an empty set.
func NewFakePodDirs() *FakePodDirs { return &FakePodDirs{dirs: map[types.UID]bool{}} }

// Add creates the directory of a pod, with or without a mounted volume.
func (d *FakePodDirs) Add(uid types.UID, mounted bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dirs[uid] = mounted
}

// List returns the UIDs with a directory, sorted.
func (d *FakePodDirs) List() ([]types.UID, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ListErr != nil {
		return nil, d.ListErr
	}
	out := make([]types.UID, 0, len(d.dirs))
	for uid := range d.dirs {
		out = append(out, uid)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// Remove deletes the directory unless a volume is still mounted.
func (d *FakePodDirs) Remove(uid types.UID) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	mounted, ok := d.dirs[uid]
	if !ok {
		return nil
	}
	if mounted {
		return fmt.Errorf("pod directory %s: volume still mounted", uid)
	}
	delete(d.dirs, uid)
	return nil
}

// FakeMirrorDeleter records deleted mirror pods as "name_namespace uid"
// and created ones as "name_namespace hash".
type FakeMirrorDeleter struct {
	mu      sync.Mutex
	deleted []string
	created []string
	// Err, when set, fails every deletion; CreateErr every creation.
	Err, CreateErr error
}

// CreateMirrorPod records the creation with the static pod's hash.
func (m *FakeMirrorDeleter) CreateMirrorPod(_ context.Context, static *v1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.CreateErr != nil {
		return m.CreateErr
	}
	m.created = append(m.created, lifecycle.PodFullName(static)+" "+static.Annotations[lifecycle.ConfigHashAnnotation])
	return nil
}

// Created returns the recorded creations.
func (m *FakeMirrorDeleter) Created() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.created...)
}

// DeleteMirrorPod records the deletion.
func (m *FakeMirrorDeleter) DeleteMirrorPod(_ context.Context, mirror *v1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Err != nil {
		return m.Err
	}
	m.deleted = append(m.deleted, lifecycle.PodFullName(mirror)+" "+string(mirror.UID))
	return nil
}

// Deleted returns the recorded deletions.
func (m *FakeMirrorDeleter) Deleted() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.deleted...)
}

var (
	_ lifecycle.PodDirs          = (*FakePodDirs)(nil)
	_ lifecycle.MirrorPodDeleter = (*FakeMirrorDeleter)(nil)
	_ lifecycle.MirrorPods       = (*FakeMirrorDeleter)(nil)
)
