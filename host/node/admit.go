package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/admission"
	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources"
)

// admitter runs admission (host/admission) on the pods the desired set
// adds, before they reach the pod workers. A rejected pod never reaches a
// worker: its status is Failed with the reason, and every later update of
// it is dropped until it leaves the desired set.
type admitter struct {
	mu       sync.Mutex
	rejected map[types.UID]string // uid → what was last done ("reason", "reason/delete")
	metric   *prometheus.CounterVec
}

func newAdmitter(reg prometheus.Registerer) *admitter {
	a := &admitter{rejected: map[types.UID]string{}, metric: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubelet_admission_rejections_total",
		Help: "Pods the node refused to run at admission, by reason.",
	}, []string{"reason"})}
	reg.MustRegister(a.metric)
	return a
}

// admit returns the updates the workers are to get: creates are admitted
// in creation order, as the kubelet does, each against the pods that hold
// node resources (those the workers run and those admitted before it);
// the updates of rejected pods are dropped.
func (n *Node) admit(ctx context.Context, updates []lifecycle.UpdatePodOptions) []lifecycle.UpdatePodOptions {
	a := n.admission
	if a == nil || n.status == nil || n.core == nil {
		return updates // a node under construction (unit tests) admits all
	}
	creates := make([]*v1.Pod, 0)
	for _, u := range updates {
		if u.UpdateType == lifecycle.UpdateCreate && u.Pod != nil {
			creates = append(creates, u.Pod)
		}
	}
	sort.SliceStable(creates, func(i, j int) bool {
		return creates[i].CreationTimestamp.Before(&creates[j].CreationTimestamp)
	})
	verdicts := map[types.UID]admission.Result{}
	if len(creates) > 0 {
		facts, look := n.nodeFacts(), n.admissionLookups(ctx)
		judged := make(map[types.UID]bool, len(creates))
		for _, pod := range creates {
			judged[pod.UID] = true
		}
		active := n.activePods(judged)
		for _, pod := range creates {
			if pod.DeletionTimestamp != nil || n.isTerminal(pod) {
				continue
			}
			r := admission.Admit(facts, withoutPredecessors(active, pod), pod, look)
			if r.Admit {
				active = append(active, pod)
				continue
			}
			verdicts[pod.UID] = r
		}
	}
	out := updates[:0:0]
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, u := range updates {
		if u.Pod == nil {
			out = append(out, u)
			continue
		}
		if r, bad := verdicts[u.Pod.UID]; bad {
			a.metric.WithLabelValues(r.Reason).Inc()
			n.rejectAtAdmission(ctx, u.Pod, r, "")
			continue
		}
		if step, bad := a.rejected[u.Pod.UID]; bad {
			if u.UpdateType == lifecycle.UpdateKill {
				delete(a.rejected, u.Pod.UID) // it left the desired set; nothing of it runs
			} else if u.Pod.DeletionTimestamp != nil && !strings.HasSuffix(step, "/delete") {
				reason, _, _ := strings.Cut(step, "/")
				n.rejectAtAdmission(ctx, u.Pod, admission.Result{Reason: reason, Message: "deleted after its rejection"}, "/delete")
			}
			continue
		}
		out = append(out, u)
	}
	return out
}

// isRejected reports whether admission refused the pod.
func (a *admitter) isRejected(uid types.UID) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.rejected[uid]
	return ok
}

// rejectAtAdmission fails the pod: its status Failed with the reason, an
// event, and for a pod of the API server the same status there (and its
// deletion once it is marked for deletion, since no worker will finish
// it). Called with a.mu held.
func (n *Node) rejectAtAdmission(ctx context.Context, pod *v1.Pod, r admission.Result, suffix string) {
	a := n.admission
	a.rejected[pod.UID] = r.Reason + suffix
	st := admission.RejectedStatus(r)
	if suffix == "" {
		n.log.Warn("pod rejected at admission", "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID, "reason", r.Reason, "message", r.Message)
		n.events.Event(pod, events.Warning, r.Reason, st.Message)
		n.status.SetPodStatus(pod, st)
	}
	o, ok := n.desired.nextOrigin(pod.UID)
	if n.kube == nil || !ok || o.Source != sources.SourceAPIServer {
		return
	}
	k := n.kube
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := k.sink.Reject(rctx, pod, st.Reason, st.Message); err != nil {
			n.log.Warn("failing a pod rejected at admission in the api server", "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID, "err", err)
		}
	}()
}

// activePods are the pods admission judges a new pod against: every pod
// the pod workers may still run. These are the pods of the newest desired
// set that admission let through, except those whose worker terminated
// them or that are terminal and not terminating (lifecycle.FilterActivePods),
// and the pods that left the set (a forced delete, a removed manifest)
// whose worker has not terminated them yet: their containers still hold
// host ports and resources. The pods being judged (judged) are left out;
// each is added once admitted.
func (n *Node) activePods(judged map[types.UID]bool) []*v1.Pod {
	next := n.desired.nextPods()
	inSet := make(map[types.UID]bool, len(next))
	config := make([]*v1.Pod, 0, len(next))
	for _, p := range next {
		inSet[p.UID] = true
		if !judged[p.UID] && !n.admission.isRejected(p.UID) {
			config = append(config, p)
		}
	}
	active := lifecycle.FilterActivePods(config, n.core, n.isTerminal)
	for _, uid := range n.core.UIDs() {
		if inSet[uid] {
			continue
		}
		st, ok := n.core.Inspect(uid)
		if !ok || !st.TerminatedAt.IsZero() {
			continue
		}
		if pod := workerPod(st); pod != nil {
			active = append(active, pod)
		}
	}
	return active
}

// withoutPredecessors leaves out of active the static pods that pod, a
// static pod, replaces: those of its full name under another UID (an
// edited manifest gives the pod a new UID, in the same change that kills
// the old one). The pod worker starts pod only once no other static pod
// holds its full name, that is once each of them finished, so the two
// never hold the node's resources at once, and judging pod against them
// would reject it for good. A pod that is not static starts beside one of
// its name that still stops, and is judged against it.
func withoutPredecessors(active []*v1.Pod, pod *v1.Pod) []*v1.Pod {
	if !lifecycle.IsStaticPod(pod) {
		return active
	}
	name := lifecycle.PodFullName(pod)
	out := active[:0:0]
	for _, p := range active {
		if p.UID != pod.UID && lifecycle.IsStaticPod(p) && lifecycle.PodFullName(p) == name {
			continue
		}
		out = append(out, p)
	}
	return out
}

// workerPod is the pod a worker runs or is about to run, nil for a pod
// known only to the runtime.
func workerPod(st lifecycle.PodWorkerState) *v1.Pod {
	switch {
	case st.Active != nil && st.Active.Pod != nil:
		return st.Active.Pod
	case st.Pending != nil:
		return st.Pending.Pod
	}
	return nil
}

// isTerminal reports a terminal phase in the pod or in the status manager.
func (n *Node) isTerminal(pod *v1.Pod) bool {
	terminal := func(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }
	if terminal(pod.Status.Phase) {
		return true
	}
	st, ok := n.status.PodStatus(pod.UID)
	return ok && terminal(st.Phase)
}

// nodeFacts is what admission knows of this node: in Kubernetes mode the
// Node as last written (labels, taints, allocatable), else the kubelet's
// own labels and no resource limits.
func (n *Node) nodeFacts() admission.Node {
	if n.kube != nil && n.kube.agent != nil {
		if node := n.kube.agent.agent.Node(); node != nil {
			return admission.Node{Name: node.Name, Labels: node.Labels, Taints: node.Spec.Taints, Allocatable: node.Status.Allocatable,
				AllowedUnsafeSysctls: n.cfg.AllowedUnsafeSysctls}
		}
	}
	return admission.Node{Name: n.cfg.NodeName, Labels: map[string]string{
		v1.LabelHostname: nodeHostname(n.cfg.NodeName), v1.LabelOSStable: runtime.GOOS, v1.LabelArchStable: runtime.GOARCH,
	}, AllowedUnsafeSysctls: n.cfg.AllowedUnsafeSysctls}
}

// admissionLookups: in Kubernetes mode a runtime class must exist in the
// API server; in local mode the runtime judges the class itself.
func (n *Node) admissionLookups(ctx context.Context) admission.Lookups {
	if n.kube == nil {
		return admission.Lookups{SeccompProfile: n.seccompProfile}
	}
	client := n.cfg.Kubernetes.Client
	return admission.Lookups{SeccompProfile: n.seccompProfile, RuntimeClass: func(name string) error {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := client.NodeV1().RuntimeClasses().Get(cctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("no RuntimeClass %q in the API server: %w", name, admission.ErrUnknown)
		}
		return err
	}}
}

// seccompRoot is the directory of the node's Localhost seccomp profiles.
func (n *Node) seccompRoot() string {
	if n.cfg.SeccompProfileRoot != "" {
		return n.cfg.SeccompProfileRoot
	}
	return filepath.Join(n.cfg.RootDir, "seccomp")
}

// seccompProfile reports whether the node has the Localhost profile name
// (podvalidate has checked that it stays inside the directory): a
// regular file under seccompRoot.
func (n *Node) seccompProfile(name string) error {
	path := filepath.Join(n.seccompRoot(), filepath.Clean("/"+name))
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("no such profile on the node: %w", err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a file", path)
	}
	return nil
}

// nodeHostname is the node's hostname as the kubelet has it: its
// configured node name (the kubelet's --hostname-override, which names
// the Node and is its kubernetes.io/hostname label and Hostname address
// alike), else the machine's hostname, lower-cased.
func nodeHostname(nodeName string) string {
	if nodeName != "" {
		return strings.ToLower(nodeName)
	}
	host, _ := os.Hostname()
	return strings.ToLower(host)
}
