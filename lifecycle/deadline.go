package lifecycle

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// The kubelet's reason and message for a pod past its activeDeadlineSeconds.
const (
	ReasonDeadlineExceeded  = "DeadlineExceeded"
	messageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// PastActiveDeadline reports whether the pod has run on the node longer
// than its activeDeadlineSeconds, measured as the kubelet measures it:
// from the start time of the status the node reported (the status
// manager's, else the pod's own), on the Syncer's clock. A pod without a
// deadline or a start time is not past it.
func (s *Syncer) PastActiveDeadline(pod *v1.Pod) bool {
	if pod.Spec.ActiveDeadlineSeconds == nil || s.Clock == nil {
		return false
	}
	st, ok := s.Status.PodStatus(pod.UID)
	if !ok {
		st = pod.Status
	}
	if st.StartTime == nil || st.StartTime.IsZero() {
		return false
	}
	return s.Clock.Now().Sub(st.StartTime.Time) >= time.Duration(*pod.Spec.ActiveDeadlineSeconds)*time.Second
}

// DueForDeadline reports whether the pod should be synced now because it
// is past its active deadline and its status is not terminal yet: the
// sync loop asks it every tick (SyncLoop.ShouldSync), as the kubelet asks
// its active deadline handler, so that the deadline is enforced within a
// second instead of at the next periodic sync.
func (s *Syncer) DueForDeadline(pod *v1.Pod) bool {
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return false
	}
	if st, ok := s.Status.PodStatus(pod.UID); ok && isTerminalPhase(st.Phase) {
		return false
	}
	return s.PastActiveDeadline(pod)
}

// failPastDeadline makes api the status of a pod past its deadline: Failed
// with the kubelet's reason and message, and records the kubelet's event.
func (s *Syncer) failPastDeadline(pod *v1.Pod, api *v1.PodStatus) {
	if isTerminalPhase(api.Phase) || !s.PastActiveDeadline(pod) {
		return
	}
	api.Phase, api.Reason, api.Message = v1.PodFailed, ReasonDeadlineExceeded, messageDeadlineExceeded
	if s.Recorder != nil {
		s.Recorder.Event(pod, EventNormal, ReasonDeadlineExceeded, messageDeadlineExceeded)
	}
}
