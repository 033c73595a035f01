package lifecycletest

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

// RecordingSink is an in-memory StatusSink that records every call as
// "get ns/name", "put ns/name" or "delete ns/name".
type RecordingSink struct {
	mu    sync.Mutex
	pods  map[string]*v1.Pod
	calls []string
	// GetErr, when set, fails Get.
	GetErr error
	// OnPut, when set, sees every status written (under the sink's lock).
	OnPut func(namespace, name string, status v1.PodStatus)
	// OnDelete, when set, sees every successful delete (under the lock).
	OnDelete func(namespace, name string)
}

// NewRecordingSink returns an empty sink.
func NewRecordingSink() *RecordingSink { return &RecordingSink{pods: map[string]*v1.Pod{}} }

// Store puts a pod into the sink, as if it existed in the API.
func (s *RecordingSink) Store(pod *v1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods[pod.Namespace+"/"+pod.Name] = pod.DeepCopy()
}

// Pod returns a copy of the stored pod.
func (s *RecordingSink) Pod(namespace, name string) (*v1.Pod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[namespace+"/"+name]
	if !ok {
		return nil, false
	}
	return p.DeepCopy(), true
}

// Calls returns and clears the call log.
func (s *RecordingSink) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

// Get returns the stored pod or ErrNotFound.
func (s *RecordingSink) Get(_ context.Context, namespace, name string) (*v1.Pod, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := namespace + "/" + name
	s.calls = append(s.calls, "get "+key)
	if s.GetErr != nil {
		return nil, s.GetErr
	}
	p, ok := s.pods[key]
	if !ok {
		return nil, fmt.Errorf("pod %s: %w", key, lifecycle.ErrNotFound)
	}
	return p.DeepCopy(), nil
}

// Put replaces the stored status, with a UID precondition.
func (s *RecordingSink) Put(_ context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := namespace + "/" + name
	s.calls = append(s.calls, "put "+key)
	p, ok := s.pods[key]
	if !ok {
		return fmt.Errorf("pod %s: %w", key, lifecycle.ErrNotFound)
	}
	if p.UID != uid {
		return fmt.Errorf("pod %s: %w", key, lifecycle.ErrUIDMismatch)
	}
	p.Status = *status.DeepCopy()
	if s.OnPut != nil {
		s.OnPut(namespace, name, *status.DeepCopy())
	}
	return nil
}

// Delete removes the pod, with a UID precondition.
func (s *RecordingSink) Delete(_ context.Context, namespace, name string, uid types.UID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := namespace + "/" + name
	s.calls = append(s.calls, "delete "+key)
	p, ok := s.pods[key]
	if !ok {
		return fmt.Errorf("pod %s: %w", key, lifecycle.ErrNotFound)
	}
	if p.UID != uid {
		return fmt.Errorf("pod %s: %w", key, lifecycle.ErrUIDMismatch)
	}
	delete(s.pods, key)
	if s.OnDelete != nil {
		s.OnDelete(namespace, name)
	}
	return nil
}

// Forget is not recorded: the sink keeps nothing of a read.
func (s *RecordingSink) Forget(types.UID) {}

var _ lifecycle.StatusSink = (*RecordingSink)(nil)
