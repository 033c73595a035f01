package admission

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	schedulinghelper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// Reasons a pod is rejected with; the kubelet's where it has one.
const (
	ReasonNodeName            = "NodeName"
	ReasonOSNotSupported      = "PodOSNotSupported"
	ReasonOSLabelMismatch     = "PodOSSelectorNodeLabelDoesNotMatch"
	ReasonNodeAffinity        = "NodeAffinity"
	ReasonTaint               = "TaintToleration"
	ReasonNodePorts           = "NodePorts"
	ReasonUnknownRuntimeClass = "RuntimeClassNotFound"
	ReasonVolume              = "UnsupportedVolume"
	// ReasonOutOfPrefix is followed by the resource's name: OutOfcpu,
	// OutOfmemory, OutOfpods, OutOfephemeral-storage.
	ReasonOutOfPrefix = "OutOf"
)

// Node is what admission knows of this node.
type Node struct {
	Name        string
	Labels      map[string]string
	Taints      []v1.Taint
	Allocatable v1.ResourceList
	// AllowedUnsafeSysctls are the sysctls beyond the safe set pods may
	// set: names, or prefixes ending in "*".
	AllowedUnsafeSysctls []string
}

// Lookups answer what the node serves; a nil lookup accepts everything.
type Lookups struct {
	// RuntimeClass returns an error when the named class is unknown.
	RuntimeClass func(name string) error
	// Volume returns an error when no plugin serves the pod's volume.
	Volume func(pod *v1.Pod, vol v1.Volume) error
	// SeccompProfile returns an error when the node has no Localhost
	// seccomp profile of that name.
	SeccompProfile func(name string) error
}

// Result is the verdict on one pod.
type Result struct {
	Admit   bool
	Reason  string
	Message string
}

func reject(reason, format string, args ...any) Result {
	return Result{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Admit decides whether pod may run on node beside the active pods (the
// pods that hold resources: admitted, not terminal). The first rule that
// fails decides, in the kubelet's order: the pod's placement, then its
// needs.
func Admit(node Node, active []*v1.Pod, pod *v1.Pod, look Lookups) Result {
	for _, check := range []func() Result{
		func() Result { return checkNodeName(node, pod) },
		func() Result { return checkOS(node, pod) },
		func() Result { return checkAffinity(node, pod) },
		func() Result { return checkTaints(node, pod) },
		func() Result { return checkHostPorts(active, pod) },
		func() Result { return checkResources(node, active, pod) },
		func() Result { return checkRuntimeClass(pod, look) },
		func() Result { return checkVolumes(pod, look) },
		func() Result { return checkSysctls(node, pod) },
		func() Result { return checkSeccomp(pod, look) },
	} {
		if r := check(); !r.Admit {
			return r
		}
	}
	return Result{Admit: true}
}

var admitted = Result{Admit: true}

func checkNodeName(node Node, pod *v1.Pod) Result {
	if pod.Spec.NodeName != "" && node.Name != "" && pod.Spec.NodeName != node.Name {
		return reject(ReasonNodeName, "the pod is bound to node %q, not to this node %q", pod.Spec.NodeName, node.Name)
	}
	return admitted
}

func checkOS(node Node, pod *v1.Pod) Result {
	if pod.Spec.OS == nil {
		return admitted
	}
	want := string(pod.Spec.OS.Name)
	if want != runtime.GOOS {
		return reject(ReasonOSNotSupported, "the pod's spec.os.name is %q; this node runs %s", want, runtime.GOOS)
	}
	if got, ok := node.Labels[v1.LabelOSStable]; ok && got != want {
		return reject(ReasonOSLabelMismatch, "the pod's spec.os.name is %q; the node's label %s is %q", want, v1.LabelOSStable, got)
	}
	return admitted
}

func checkAffinity(node Node, pod *v1.Pod) Result {
	n := &v1.Node{}
	n.Name, n.Labels = node.Name, node.Labels
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(n)
	if err != nil {
		return reject(ReasonNodeAffinity, "the pod's node affinity does not parse: %v", err)
	}
	if !ok {
		return reject(ReasonNodeAffinity, "the node's labels match neither the pod's nodeSelector nor its required node affinity")
	}
	return admitted
}

// checkTaints rejects a pod that does not tolerate a NoExecute taint: those
// would evict it at once. NoSchedule taints are the scheduler's business.
func checkTaints(node Node, pod *v1.Pod) Result {
	taint, found := schedulinghelper.FindMatchingUntoleratedTaint(klog.Background(), node.Taints, pod.Spec.Tolerations,
		func(t *v1.Taint) bool { return t.Effect == v1.TaintEffectNoExecute }, false)
	if found {
		return reject(ReasonTaint, "the pod does not tolerate the node's taint %s=%s:%s", taint.Key, taint.Value, taint.Effect)
	}
	return admitted
}

// hostPort identifies a port a container takes on the node.
type hostPort struct {
	ip, protocol string
	port         int32
}

func hostPorts(pod *v1.Pod) []hostPort {
	var out []hostPort
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			ip, proto := p.HostIP, string(p.Protocol)
			if ip == "" {
				ip = "0.0.0.0"
			}
			if proto == "" {
				proto = string(v1.ProtocolTCP)
			}
			out = append(out, hostPort{ip: ip, protocol: proto, port: p.HostPort})
		}
	}
	return out
}

func (a hostPort) conflicts(b hostPort) bool {
	return a.port == b.port && a.protocol == b.protocol && (a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0")
}

func checkHostPorts(active []*v1.Pod, pod *v1.Pod) Result {
	want := hostPorts(pod)
	if len(want) == 0 {
		return admitted
	}
	for _, other := range active {
		if other.UID == pod.UID {
			continue
		}
		for _, taken := range hostPorts(other) {
			for _, w := range want {
				if w.conflicts(taken) {
					return reject(ReasonNodePorts, "host port %s/%d is taken by pod %s/%s", w.protocol, w.port, other.Namespace, other.Name)
				}
			}
		}
	}
	return admitted
}

// checkResources adds the pod's requests to those of the active pods and
// compares them with the allocatable; a resource the node does not list is
// not limited, except pods, which the node always counts.
func checkResources(node Node, active []*v1.Pod, pod *v1.Pod) Result {
	used := v1.ResourceList{}
	count := 0
	for _, other := range active {
		if other.UID == pod.UID {
			continue
		}
		count++
		for name, q := range resourcehelper.PodRequests(other, resourcehelper.PodResourcesOptions{}) {
			sum := used[name]
			sum.Add(q)
			used[name] = sum
		}
	}
	if max, ok := node.Allocatable[v1.ResourcePods]; ok && int64(count+1) > max.Value() {
		return reject(ReasonOutOfPrefix+string(v1.ResourcePods), "the node runs %d pods already and allows %d", count, max.Value())
	}
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	names := make([]string, 0, len(req))
	for name := range req {
		names = append(names, string(name))
	}
	slices.Sort(names)
	for _, n := range names {
		name := v1.ResourceName(n)
		want := req[name]
		capacity, limited := node.Allocatable[name]
		if !limited || want.IsZero() {
			continue
		}
		total := used[name]
		total.Add(want)
		if total.Cmp(capacity) > 0 {
			u := used[name]
			return reject(ReasonOutOfPrefix+n, "the node does not have enough %s: the pod requests %s, the running pods use %s of %s",
				n, want.String(), u.String(), capacity.String())
		}
	}
	return admitted
}

func checkRuntimeClass(pod *v1.Pod, look Lookups) Result {
	if pod.Spec.RuntimeClassName == nil || *pod.Spec.RuntimeClassName == "" || look.RuntimeClass == nil {
		return admitted
	}
	if err := look.RuntimeClass(*pod.Spec.RuntimeClassName); err != nil {
		return reject(ReasonUnknownRuntimeClass, "spec.runtimeClassName %q: %v", *pod.Spec.RuntimeClassName, err)
	}
	return admitted
}

func checkVolumes(pod *v1.Pod, look Lookups) Result {
	if look.Volume == nil {
		return admitted
	}
	var errs []string
	for i, vol := range pod.Spec.Volumes {
		if err := look.Volume(pod, vol); err != nil {
			errs = append(errs, fmt.Sprintf("spec.volumes[%d] (%s): %v", i, vol.Name, err))
		}
	}
	if len(errs) > 0 {
		return reject(ReasonVolume, "%s", strings.Join(errs, "; "))
	}
	return admitted
}

// ErrUnknown is what a lookup may wrap when it does not know a name.
var ErrUnknown = errors.New("not known on this node")

// RejectedStatus is the status of a rejected pod, as the kubelet writes it:
// phase Failed, the reason, and "Pod was rejected: " before the message.
func RejectedStatus(r Result) v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodFailed, Reason: r.Reason, Message: "Pod was rejected: " + r.Message}
}
