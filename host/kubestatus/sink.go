package kubestatus

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources/kubesource"
)

var _ lifecycle.StatusSink = (*Sink)(nil)

// Sink is the API server as a status sink. It is safe for concurrent use;
// the status manager never calls it concurrently for one pod.
type Sink struct {
	client      kubernetes.Interface
	runtimeType func(ctx context.Context) (string, error)

	mu sync.Mutex
	// read is the status Get last returned for each pod UID: the base of
	// the next Put's patch. An entry goes with the Put, Delete or Forget
	// after it, so none outlives the status manager's sync that read it.
	read map[types.UID]v1.PodStatus
}

// New returns a sink that talks to the API server through client.
// runtimeType returns the container runtime's type ("containerd"), which
// the container IDs carry in the API; nil writes the runtime's IDs as
// they are.
func New(client kubernetes.Interface, runtimeType func(ctx context.Context) (string, error)) *Sink {
	return &Sink{client: client, runtimeType: runtimeType, read: map[types.UID]v1.PodStatus{}}
}

// Get reads the pod from the API server; its container IDs are the
// runtime's, without the type.
func (s *Sink) Get(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	pod, err := s.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s: %w", namespace, name, translate(err))
	}
	s.mu.Lock()
	s.read[pod.UID] = *pod.Status.DeepCopy()
	s.mu.Unlock()
	kubesource.StripContainerIDTypes(&pod.Status)
	return pod, nil
}

// Put patches the status of the pod with this UID, its container IDs
// carrying the runtime's type.
func (s *Sink) Put(ctx context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error {
	if s.runtimeType != nil {
		typ, err := s.runtimeType(ctx)
		if err != nil {
			return fmt.Errorf("writing status of pod %s/%s: the container runtime's type: %w", namespace, name, err)
		}
		status = *status.DeepCopy()
		kubesource.SetContainerIDType(&status, typ)
	}
	s.mu.Lock()
	old := s.read[uid]
	delete(s.read, uid)
	s.mu.Unlock()
	if err := s.patchStatus(ctx, namespace, name, uid, old, status); err != nil {
		return fmt.Errorf("writing status of pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// patchStatus sends the patch from old to status, with uid as the
// precondition.
func (s *Sink) patchStatus(ctx context.Context, namespace, name string, uid types.UID, old, status v1.PodStatus) error {
	patch, err := statusPatch(uid, old, status)
	if err != nil {
		return err
	}
	_, err = s.client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return translate(err)
}

// statusPatch is the strategic merge patch from old to status; the UID is
// only in the new side, so it is always in the patch, where the API server
// checks it against the stored pod's.
func statusPatch(uid types.UID, old, status v1.PodStatus) ([]byte, error) {
	before, err := json.Marshal(v1.Pod{Status: old})
	if err != nil {
		return nil, fmt.Errorf("encoding pod status: %w", err)
	}
	after, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: status})
	if err != nil {
		return nil, fmt.Errorf("encoding pod status: %w", err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(before, after, v1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("building the status patch: %w", err)
	}
	return patch, nil
}

// Forget drops the status Get read of the pod with this UID: the sync
// that read it writes nothing.
func (s *Sink) Forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.read, uid)
}

// Delete deletes the pod with this UID at once (grace period 0).
func (s *Sink) Delete(ctx context.Context, namespace, name string, uid types.UID) error {
	s.mu.Lock()
	delete(s.read, uid)
	s.mu.Unlock()
	grace := int64(0)
	err := s.client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace, Preconditions: metav1.NewUIDPreconditions(string(uid)),
	})
	if err = translate(err); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Reject fails a pod that the node will not run: its phase becomes Failed
// with reason and message (unless it already is, with the same reason),
// and a pod the API server marked for deletion is deleted.
func (s *Sink) Reject(ctx context.Context, pod *v1.Pod, reason, message string) error {
	st := pod.Status
	if st.Phase != v1.PodFailed || st.Reason != reason || st.Message != message {
		next := *st.DeepCopy()
		next.Phase, next.Reason, next.Message = v1.PodFailed, reason, message
		if err := s.patchStatus(ctx, pod.Namespace, pod.Name, pod.UID, st, next); err != nil {
			return fmt.Errorf("failing rejected pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	if pod.DeletionTimestamp == nil {
		return nil
	}
	return s.Delete(ctx, pod.Namespace, pod.Name, pod.UID)
}
