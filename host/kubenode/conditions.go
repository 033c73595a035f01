package kubenode

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Reason strings of the node conditions, the kubelet's: tooling reads
// them.
const (
	ReasonReady                = "KubeletReady"
	ReasonNotReady             = "KubeletNotReady"
	ReasonSufficientMemory     = "KubeletHasSufficientMemory"
	ReasonInsufficientMemory   = "KubeletHasInsufficientMemory"
	ReasonNoDiskPressure       = "KubeletHasNoDiskPressure"
	ReasonDiskPressure         = "KubeletHasDiskPressure"
	ReasonSufficientPID        = "KubeletHasSufficientPID"
	ReasonInsufficientPID      = "KubeletHasInsufficientPID"
	messageReady               = "podhost is posting ready status"
	messageNotReadyPrefix      = "podhost is not ready: "
	messageSufficientMemory    = "podhost has sufficient memory available"
	messageInsufficientMemory  = "podhost has insufficient memory available"
	messageNoDiskPressure      = "podhost has no disk pressure"
	messageDiskPressure        = "podhost has disk pressure"
	messageSufficientPID       = "podhost has sufficient PID available"
	messageInsufficientPID     = "podhost has insufficient PID available"
	requiredCapacityMissingFmt = "missing node capacity for resources: %s"
)

// requiredCapacity is what a Ready node must offer.
var requiredCapacity = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods, v1.ResourceEphemeralStorage}

// condition is the state one of the agent's conditions should have.
type condition struct {
	typ             v1.NodeConditionType
	status          v1.ConditionStatus
	reason, message string
}

// wantConditions turns health and the capacity into the four conditions
// the agent owns, Ready last (kubelets keep it last for old readers).
func wantConditions(h Health, capacity v1.ResourceList) []condition {
	pressure := func(typ v1.NodeConditionType, on bool, yes, yesMsg, no, noMsg string) condition {
		if on {
			return condition{typ, v1.ConditionTrue, yes, yesMsg}
		}
		return condition{typ, v1.ConditionFalse, no, noMsg}
	}
	notReady := slices.Clone(h.NotReady)
	var missing []string
	for _, r := range requiredCapacity {
		if _, ok := capacity[r]; !ok {
			missing = append(missing, string(r))
		}
	}
	if len(missing) > 0 {
		notReady = append(notReady, fmt.Sprintf(requiredCapacityMissingFmt, strings.Join(missing, ", ")))
	}
	ready := condition{v1.NodeReady, v1.ConditionTrue, ReasonReady, messageReady}
	if len(notReady) > 0 {
		ready = condition{v1.NodeReady, v1.ConditionFalse, ReasonNotReady, messageNotReadyPrefix + strings.Join(notReady, "; ")}
	}
	return []condition{
		pressure(v1.NodeMemoryPressure, h.MemoryPressure, ReasonInsufficientMemory, messageInsufficientMemory, ReasonSufficientMemory, messageSufficientMemory),
		pressure(v1.NodeDiskPressure, h.DiskPressure, ReasonDiskPressure, messageDiskPressure, ReasonNoDiskPressure, messageNoDiskPressure),
		pressure(v1.NodePIDPressure, h.PIDPressure, ReasonInsufficientPID, messageInsufficientPID, ReasonSufficientPID, messageSufficientPID),
		ready,
	}
}

// setConditions returns the conditions of a Node that had have, with the
// agent's conditions set to want at now: lastHeartbeatTime is now, and
// lastTransitionTime is now only when the status changed (or the
// condition is new). Conditions the agent does not own are kept, in their
// order, before the agent's.
func setConditions(have []v1.NodeCondition, want []condition, now metav1.Time) []v1.NodeCondition {
	owned := map[v1.NodeConditionType]bool{}
	for _, w := range want {
		owned[w.typ] = true
	}
	var out []v1.NodeCondition
	old := map[v1.NodeConditionType]v1.NodeCondition{}
	for _, c := range have {
		if owned[c.Type] {
			old[c.Type] = c
			continue
		}
		out = append(out, c)
	}
	for _, w := range want {
		c := v1.NodeCondition{Type: w.typ, Status: w.status, Reason: w.reason, Message: w.message,
			LastHeartbeatTime: now, LastTransitionTime: now}
		if prev, ok := old[w.typ]; ok && prev.Status == w.status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
		out = append(out, c)
	}
	return out
}

// statusChanged reports whether two statuses differ in more than the
// conditions' heartbeat times (and the conditions' order).
func statusChanged(a, b *v1.NodeStatus) bool {
	strip := func(s *v1.NodeStatus) *v1.NodeStatus {
		s = s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastHeartbeatTime = metav1.Time{}
		}
		slices.SortStableFunc(s.Conditions, func(x, y v1.NodeCondition) int { return strings.Compare(string(x.Type), string(y.Type)) })
		return s
	}
	return !apiequality.Semantic.DeepEqual(strip(a), strip(b))
}
