package runtimemanager

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Event reasons the Manager records, the kubelet's.
const (
	EventPulled  = "Pulled"
	EventCreated = "Created"
	EventStarted = "Started"
	EventKilling = "Killing"
	EventBackOff = "BackOff"
	EventFailed  = "Failed"
	// EventResizeCompleted and EventResizeError: an in-place resize
	// actuated, or failed (resize.go).
	EventResizeCompleted = "ResizeCompleted"
	EventResizeError     = "ResizeError"
)

// event records one event about pod when a Recorder is set.
func (m *Manager) event(pod *v1.Pod, eventType, reason, format string, args ...any) {
	if m.opts.Recorder == nil || pod == nil {
		return
	}
	m.opts.Recorder.Event(pod, eventType, reason, fmt.Sprintf(format, args...))
}

// imageEvent records Pulled: a fresh pull, or an image already present.
func (m *Manager) imageEvent(pod *v1.Pod, image string, resp *runtimev1.EnsureImageResponse) {
	if resp.GetPulled() {
		m.event(pod, lifecycle.EventNormal, EventPulled, "Successfully pulled image %q", image)
		return
	}
	m.event(pod, lifecycle.EventNormal, EventPulled, "Container image %q already present on machine", image)
}

// podOf is the pod an event about st is recorded on: pod itself, or, for
// a pod known only to the runtime, one made of the names on its objects.
func podOf(pod *v1.Pod, st *podState) *v1.Pod {
	if pod != nil {
		return pod
	}
	p := &v1.Pod{}
	p.Namespace, p.Name, p.UID = st.namespace, st.name, st.uid
	return p
}
