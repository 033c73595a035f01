package kubenode

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// The reasons of the events the agent records on its Node: the kubelet's,
// which operators and tooling know (kubectl describe node lists them).
const (
	EventStarting                  = "Starting"
	EventNodeReady                 = "NodeReady"
	EventNodeNotReady              = "NodeNotReady"
	EventNodeHasSufficientMemory   = "NodeHasSufficientMemory"
	EventNodeHasInsufficientMemory = "NodeHasInsufficientMemory"
	EventNodeHasNoDiskPressure     = "NodeHasNoDiskPressure"
	EventNodeHasDiskPressure       = "NodeHasDiskPressure"
	EventNodeHasSufficientPID      = "NodeHasSufficientPID"
	EventNodeHasInsufficientPID    = "NodeHasInsufficientPID"
)

// EventSourceComponent is the source.component of the Node's events: the
// kubelet's, so that what selects a node agent's events finds them.
const EventSourceComponent = "kubelet"

// conditionEventReasons maps each condition the agent owns, and a status
// it takes, to the event of that transition.
var conditionEventReasons = map[v1.NodeConditionType]map[v1.ConditionStatus]string{
	v1.NodeMemoryPressure: {v1.ConditionTrue: EventNodeHasInsufficientMemory, v1.ConditionFalse: EventNodeHasSufficientMemory},
	v1.NodeDiskPressure:   {v1.ConditionTrue: EventNodeHasDiskPressure, v1.ConditionFalse: EventNodeHasNoDiskPressure},
	v1.NodePIDPressure:    {v1.ConditionTrue: EventNodeHasInsufficientPID, v1.ConditionFalse: EventNodeHasSufficientPID},
	v1.NodeReady:          {v1.ConditionTrue: EventNodeReady, v1.ConditionFalse: EventNodeNotReady},
}

// conditionEvents returns the reasons of the events a write from before to
// after records, in after's order (Ready last): one for each condition the
// agent owns whose status changed, or that before did not have. A changed
// reason, message or heartbeat is no event. Unlike a kubelet, which keeps
// quiet about a Ready condition it creates, a new node's Ready is reported
// too, so that NodeReady (or NodeNotReady) always marks the node's first
// status.
func conditionEvents(before, after []v1.NodeCondition) []string {
	had := map[v1.NodeConditionType]v1.ConditionStatus{}
	for _, c := range before {
		had[c.Type] = c.Status
	}
	var out []string
	for _, c := range after {
		reason, ok := conditionEventReasons[c.Type][c.Status]
		if !ok {
			continue
		}
		if prev, ok := had[c.Type]; ok && prev == c.Status {
			continue
		}
		out = append(out, reason)
	}
	return out
}

// nodeRef is the object of the Node's events. Its UID is the node's name,
// as on a kubelet's events, which is what kubectl describe node looks for.
func (a *Agent) nodeRef() *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "Node", Name: a.o.NodeName, UID: types.UID(a.o.NodeName)}
}

// event records a Normal event on the Node; none before Run set up the
// recorder.
func (a *Agent) event(reason, message string) {
	if a.o.Recorder != nil {
		a.o.Recorder.Event(a.nodeRef(), v1.EventTypeNormal, reason, message)
	}
}

// PodEvent records an event about an API-server pod on the API server,
// as the kubelet's pod events (kubectl describe pod); none before Run set
// up the recorder. It never blocks: client-go drops what its queue cannot
// hold.
func (a *Agent) PodEvent(pod *v1.Pod, eventType, reason, message string) {
	if r := a.podEvents.Load(); r != nil && *r != nil && pod != nil {
		(*r).Event(pod, eventType, reason, message)
	}
}

// recordStarting records that the agent starts.
func (a *Agent) recordStarting() { a.event(EventStarting, "Starting kubelet.") }

// recordTransitions records the events of a write from before to after.
func (a *Agent) recordTransitions(before, after []v1.NodeCondition) {
	for _, reason := range conditionEvents(before, after) {
		a.event(reason, fmt.Sprintf("Node %s status is now: %s", a.o.NodeName, reason))
		a.o.Logger.Info("node condition changed", "node", a.o.NodeName, "event", reason)
	}
}

// recordToAPIServer sets Options.Recorder to one that writes the events to
// the API server with the node's credentials (the Node authorizer lets a
// node create events) and returns its stop. Writes are asynchronous and
// retried by client-go; events still queued when it stops are dropped.
func (a *Agent) recordToAPIServer() (stop func()) {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: a.o.Client.CoreV1().Events("")})
	a.o.Recorder = b.NewRecorder(scheme.Scheme, v1.EventSource{Component: EventSourceComponent, Host: a.o.NodeName})
	return b.Shutdown
}

// NodeEvent records an event on the Node from another goroutine than
// Run's (the eviction manager's EvictionThresholdMet); none before Run set
// up the recorder.
func (a *Agent) NodeEvent(eventType, reason, message string) {
	if r := a.podEvents.Load(); r != nil && *r != nil {
		(*r).Event(a.nodeRef(), eventType, reason, message)
	}
}
