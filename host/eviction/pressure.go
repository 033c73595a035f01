package eviction

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// The node-pressure signals, the kubelet's names.
const (
	SignalMemoryAvailable   = "memory.available"
	SignalNodeFsAvailable   = "nodefs.available"
	SignalNodeFsInodesFree  = "nodefs.inodesFree"
	SignalImageFsAvailable  = "imagefs.available"
	SignalImageFsInodesFree = "imagefs.inodesFree"
)

// DefaultPressureTransitionPeriod is how long a pressure condition stays
// after its signal recovered, the kubelet's
// evictionPressureTransitionPeriod.
const DefaultPressureTransitionPeriod = 5 * time.Minute

// resourceInodes is the resource a inodesFree signal reclaims, the
// kubelet's name for it.
const resourceInodes v1.ResourceName = "inodes"

// signalResource is what a signal reclaims; signalCondition the node
// condition it sets.
var (
	signalResource = map[string]v1.ResourceName{
		SignalMemoryAvailable:   v1.ResourceMemory,
		SignalNodeFsAvailable:   v1.ResourceEphemeralStorage,
		SignalNodeFsInodesFree:  resourceInodes,
		SignalImageFsAvailable:  v1.ResourceEphemeralStorage,
		SignalImageFsInodesFree: resourceInodes,
	}
	signalCondition = map[string]v1.NodeConditionType{
		SignalMemoryAvailable:   v1.NodeMemoryPressure,
		SignalNodeFsAvailable:   v1.NodeDiskPressure,
		SignalNodeFsInodesFree:  v1.NodeDiskPressure,
		SignalImageFsAvailable:  v1.NodeDiskPressure,
		SignalImageFsInodesFree: v1.NodeDiskPressure,
	}
)

// Threshold is a hard eviction threshold: the signal is met when what is
// available falls below Quantity, or below Percentage of the capacity
// when Quantity is nil.
type Threshold struct {
	Signal     string
	Quantity   *resource.Quantity
	Percentage float64 // 0 < p <= 100
}

// DefaultThresholds are the kubelet's default hard thresholds on Linux.
func DefaultThresholds() []Threshold {
	return []Threshold{
		{Signal: SignalMemoryAvailable, Quantity: ptrTo(resource.MustParse("100Mi"))},
		{Signal: SignalNodeFsAvailable, Percentage: 10},
		{Signal: SignalNodeFsInodesFree, Percentage: 5},
		{Signal: SignalImageFsAvailable, Percentage: 15},
	}
}

func ptrTo[T any](v T) *T { return &v }

// ParseThreshold reads one threshold's value as the kubelet's
// evictionHard map writes it: a quantity ("100Mi", "1000" inodes) or a
// percentage of the capacity ("10%"). A value of "0%" or "0" disables it
// (ok false).
func ParseThreshold(signal, value string) (t Threshold, ok bool, err error) {
	if _, known := signalResource[signal]; !known {
		return Threshold{}, false, fmt.Errorf("unknown signal %q (one of %s)", signal, strings.Join(Signals(), ", "))
	}
	t.Signal = signal
	if p, isPct := strings.CutSuffix(value, "%"); isPct {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f < 0 || f > 100 {
			return Threshold{}, false, fmt.Errorf("%s: %q is not a percentage between 0%% and 100%%", signal, value)
		}
		t.Percentage = f
		return t, f > 0, nil
	}
	q, err := resource.ParseQuantity(value)
	if err != nil || q.Sign() < 0 {
		return Threshold{}, false, fmt.Errorf("%s: %q is neither a non-negative quantity nor a percentage", signal, value)
	}
	t.Quantity = &q
	return t, q.Sign() > 0, nil
}

// Signals are the signals a threshold may name, sorted.
func Signals() []string {
	out := make([]string, 0, len(signalResource))
	for s := range signalResource {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Observation is one signal's reading: what is available of the capacity
// (bytes, or inodes), measured at At (zero: now).
type Observation struct {
	Available, Capacity uint64
	At                  time.Time
}

// Observations are the node's signals by name; a signal not measured is
// absent and meets no threshold.
type Observations map[string]Observation

// quantity is the threshold's value against capacity.
func (t Threshold) quantity(capacity uint64) uint64 {
	if t.Quantity != nil {
		return uint64(max(t.Quantity.Value(), 0))
	}
	return uint64(float64(capacity) * t.Percentage / 100)
}

// ThresholdsMet are the thresholds whose signal is below them, memory
// first (the kubelet reclaims memory before disk), otherwise in the
// order given.
func ThresholdsMet(ts []Threshold, obs Observations) []Threshold {
	var met []Threshold
	for _, t := range ts {
		o, ok := obs[t.Signal]
		if ok && o.Available < t.quantity(o.Capacity) {
			met = append(met, t)
		}
	}
	slices.SortStableFunc(met, func(a, b Threshold) int {
		return cmpBool(a.Signal == SignalMemoryAvailable, b.Signal == SignalMemoryAvailable)
	})
	return met
}

// Conditions are the node's pressure conditions: those of the thresholds
// met now, and those observed within period before now (a condition stays
// for the transition period after its signal recovers). lastObserved is
// updated with the conditions met now and forgets those older than period.
func Conditions(met []Threshold, lastObserved map[v1.NodeConditionType]time.Time, now time.Time, period time.Duration) []v1.NodeConditionType {
	for _, t := range met {
		lastObserved[signalCondition[t.Signal]] = now
	}
	var out []v1.NodeConditionType
	for c, at := range lastObserved {
		if now.Sub(at) < period {
			out = append(out, c)
		} else {
			delete(lastObserved, c)
		}
	}
	slices.Sort(out)
	return out
}

// PodUsage is what a pod uses of the resources a signal reclaims: memory
// is its working set, Disk its local ephemeral storage (writable layers,
// logs, emptyDirs on disk), Layers its writable layers only (what it has
// on a dedicated image filesystem). Containers are the per-container
// working set and writable layer plus logs, for the message.
type PodUsage struct {
	Memory, Disk, Layers uint64
	Containers           map[string]ContainerPressureUsage
}

// ContainerPressureUsage is one container's share of a PodUsage.
type ContainerPressureUsage struct{ Memory, Disk uint64 }

// UsageFunc gives a pod's usage; false when it was not measured (the
// kubelet evicts such a pod first).
type UsageFunc func(pod *v1.Pod) (PodUsage, bool)

// DecidePressure picks the one pod to evict for the first of met (see
// ThresholdsMet) that reclaims something, among pods, ranked as the
// kubelet ranks them: for memory, the pods whose working set exceeds their
// memory request first, then the lower priority, then the larger use above
// the request; for disk, the same with local ephemeral storage (on a
// dedicated image filesystem only the writable layers count for the
// imagefs signals). Critical pods (see Critical) are skipped. The eviction
// carries the kubelet's message. ok is false when nothing is met or no pod
// may be evicted.
func DecidePressure(met []Threshold, obs Observations, dedicatedImageFs bool, pods []*v1.Pod, usage UsageFunc) (*v1.Pod, Eviction, bool) {
	if len(met) == 0 {
		return nil, Eviction{}, false
	}
	t := met[0]
	res := signalResource[t.Signal]
	measure := func(u PodUsage) uint64 {
		switch {
		case res == v1.ResourceMemory:
			return u.Memory
		case dedicatedImageFs && (t.Signal == SignalImageFsAvailable || t.Signal == SignalImageFsInodesFree):
			return u.Layers
		}
		return u.Disk
	}
	type ranked struct {
		pod     *v1.Pod
		found   bool
		used    uint64
		request int64
	}
	var rs []ranked
	for _, p := range pods {
		if Critical(p) {
			continue
		}
		u, found := usage(p)
		r := ranked{pod: p, found: found, used: measure(u)}
		if res != resourceInodes {
			req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})[res]
			r.request = req.Value()
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return nil, Eviction{}, false
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if a.found != b.found {
			return cmpBool(!a.found, !b.found)
		}
		return cmp.Or(
			cmpBool(int64(a.used) > a.request, int64(b.used) > b.request),
			cmp.Compare(podPriority(a.pod), podPriority(b.pod)),
			cmp.Compare(int64(b.used)-b.request, int64(a.used)-a.request),
		)
	})
	victim := rs[0].pod
	u, _ := usage(victim)
	return victim, Eviction{Signal: t.Signal, Message: pressureMessage(t, res, obs[t.Signal], victim, u)}, true
}

// pressureMessage is the kubelet's message of a node-pressure eviction.
func pressureMessage(t Threshold, res v1.ResourceName, o Observation, pod *v1.Pod, u PodUsage) string {
	format := resource.BinarySI
	if res == resourceInodes {
		format = resource.DecimalSI
	}
	msg := fmt.Sprintf("The node was low on resource: %s. ", res)
	msg += fmt.Sprintf("Threshold quantity: %s, available: %s. ",
		resource.NewQuantity(int64(t.quantity(o.Capacity)), format), resource.NewQuantity(int64(o.Available), format))
	if res == resourceInodes {
		return msg
	}
	cs := append(slices.Clone(pod.Spec.Containers), pod.Spec.InitContainers...)
	for _, c := range cs {
		cu, ok := u.Containers[c.Name]
		if !ok {
			continue
		}
		used := cu.Disk
		if res == v1.ResourceMemory {
			used = cu.Memory
		}
		req := c.Resources.Requests[res]
		q := resource.NewQuantity(int64(used), resource.BinarySI)
		if q.Cmp(req) > 0 {
			msg += fmt.Sprintf("Container %s was using %s, request is %s, has larger consumption of %s. ", c.Name, q, req.String(), res)
		}
	}
	return msg
}

// podPriority is the pod's priority, zero when unset.
func podPriority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// cmpBool orders true before false.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// PressureStatus makes st the status of a pod evicted for node pressure:
// FailedStatus and the DisruptionTarget condition the kubelet adds
// (reason TerminationByKubelet).
func PressureStatus(st *v1.PodStatus, e Eviction, now time.Time) {
	FailedStatus(st, e)
	c := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonTerminationByKubelet,
		Message: e.Message, LastTransitionTime: metav1.NewTime(now)}
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.DisruptionTarget {
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// NodePressure reports whether e is a node-pressure eviction (its signal
// one of Signals) rather than a local storage limit's.
func (e Eviction) NodePressure() bool {
	_, ok := signalResource[e.Signal]
	return ok
}

// SetStatus makes st the status of a pod evicted for e: PressureStatus for
// a node-pressure eviction, FailedStatus for a limit's.
func SetStatus(st *v1.PodStatus, e Eviction, now time.Time) {
	if e.NodePressure() {
		PressureStatus(st, e, now)
		return
	}
	FailedStatus(st, e)
}
