package kubenode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/podhost/podhost/test/kubecluster"
)

// The tests against a real kube-apiserver shorten the agent's periods so
// that renewals and periodic posts happen within seconds; the waits are
// for conditions, with deadlines.
const (
	testRenew  = time.Second
	testStatus = 200 * time.Millisecond
	testReport = 2 * time.Second
	deadline   = 30 * time.Second
)

// testNode is an agent running against a cluster with a node's identity.
type testNode struct {
	a      *Agent
	client kubernetes.Interface
	ready  atomic.Pointer[error] // what RuntimeReady returns
	done   chan error
}

// nodeClient is a clientset with the kubeconfig of node name.
func nodeClient(t *testing.T, c *kubecluster.Cluster, name string) kubernetes.Interface {
	t.Helper()
	path, err := c.NodeKubeconfig(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// startNode runs an agent named name with the credentials of node creds
// until the test ends.
func startNode(t *testing.T, c *kubecluster.Cluster, creds, name string, edit func(*Options)) *testNode {
	t.Helper()
	tn := &testNode{client: nodeClient(t, c, creds), done: make(chan error, 1)}
	var ok error
	tn.ready.Store(&ok)
	opts := Options{
		Client: tn.client, NodeName: name,
		Addresses:      []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.7"}, {Type: v1.NodeHostName, Address: name}},
		DaemonPort:     10250,
		RootDir:        t.TempDir(),
		KubeletVersion: "v1.37.2+podhost.test",
		RuntimeVersion: func(context.Context) (string, error) { return "memory://0.1.0", nil },
		RuntimeReady:   func(context.Context) error { return *tn.ready.Load() },
		Labels:         map[string]string{"node.kubernetes.io/pool": "test"},
		RenewInterval:  testRenew, StatusFrequency: testStatus, ReportFrequency: testReport,
		Logger: hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.Debug, Output: testWriter{t}}),
	}
	if edit != nil {
		edit(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tn.a = a
	ctx, cancel := context.WithCancel(context.Background())
	go func() { tn.done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-tn.done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v; want context.Canceled", err)
		}
	})
	return tn
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// waitFor polls check until it returns "" (done) or the deadline passes;
// then it fails with check's last word.
func waitFor(t *testing.T, what string, check func() string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		last := check()
		if last == "" {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("waiting %v for %s: %s", deadline, what, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func findCondition(n *v1.Node, typ v1.NodeConditionType) *v1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// nodeCondition reads node name and checks one condition's status and
// reason; it returns what is wrong, or "".
func nodeCondition(ctx context.Context, c *kubecluster.Cluster, name string, typ v1.NodeConditionType, status v1.ConditionStatus, reason string) (*v1.Node, string) {
	n, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err.Error()
	}
	cond := findCondition(n, typ)
	if cond == nil {
		return n, fmt.Sprintf("no %s condition in %v", typ, n.Status.Conditions)
	}
	if cond.Status != status || cond.Reason != reason {
		return n, fmt.Sprintf("%s is %s/%s (%s); want %s/%s", typ, cond.Status, cond.Reason, cond.Message, status, reason)
	}
	return n, ""
}

func getLease(ctx context.Context, c *kubecluster.Cluster, name string) (*coordinationv1.Lease, error) {
	return c.Client.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
}

// renewedAfter checks that the Lease of node name was renewed after since.
func renewedAfter(ctx context.Context, c *kubecluster.Cluster, name string, since time.Time) func() string {
	return func() string {
		l, err := getLease(ctx, c, name)
		if err != nil {
			return err.Error()
		}
		if !l.Spec.RenewTime.After(since) {
			return fmt.Sprintf("renewed at %v, not after %v", l.Spec.RenewTime, since)
		}
		return ""
	}
}

// TestNodeRegistersReady starts an agent and checks the Node it registers:
// Ready and no pressure with the kubelet's reasons, its labels, addresses,
// daemon endpoint, node info and capacity; then a runtime that is not
// ready turns it NotReady (a transition) and back, and a periodic post
// moves the heartbeat but not the transition.
func TestNodeRegistersReady(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	ctx := t.Context()
	tn := startNode(t, c, "n1", "n1", nil)
	select {
	case <-tn.a.Registered():
	case <-time.After(deadline):
		t.Fatal("the node did not register")
	}

	var n *v1.Node
	waitFor(t, "Ready", func() (msg string) {
		n, msg = nodeCondition(ctx, c, "n1", v1.NodeReady, v1.ConditionTrue, ReasonReady)
		return msg
	})
	for _, want := range []struct {
		typ    v1.NodeConditionType
		reason string
	}{{v1.NodeMemoryPressure, ReasonSufficientMemory}, {v1.NodeDiskPressure, ReasonNoDiskPressure}, {v1.NodePIDPressure, ReasonSufficientPID}} {
		if cond := findCondition(n, want.typ); cond == nil || cond.Status != v1.ConditionFalse || cond.Reason != want.reason {
			t.Errorf("condition %s = %+v; want False/%s", want.typ, cond, want.reason)
		}
	}
	for k, v := range map[string]string{v1.LabelHostname: "n1", v1.LabelOSStable: "linux", "node.kubernetes.io/pool": "test"} {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q; want %q (labels %v)", k, n.Labels[k], v, n.Labels)
		}
	}
	if got := n.Status.Addresses; len(got) != 2 || got[0].Address != "10.0.0.7" || got[1].Address != "n1" {
		t.Errorf("addresses %v", got)
	}
	if p := n.Status.DaemonEndpoints.KubeletEndpoint.Port; p != 10250 {
		t.Errorf("daemon endpoint port %d; want 10250", p)
	}
	info := n.Status.NodeInfo
	if info.KubeletVersion != "v1.37.2+podhost.test" || info.ContainerRuntimeVersion != "memory://0.1.0" || info.KernelVersion == "" || info.BootID == "" || info.OperatingSystem != "linux" {
		t.Errorf("node info %+v", info)
	}
	for _, r := range requiredCapacity {
		if q, ok := n.Status.Capacity[r]; !ok || q.Sign() <= 0 {
			t.Errorf("capacity %s = %v; capacity %v", r, q, n.Status.Capacity)
		}
		if _, ok := n.Status.Allocatable[r]; !ok {
			t.Errorf("no allocatable %s: %v", r, n.Status.Allocatable)
		}
	}
	readySince := findCondition(n, v1.NodeReady).LastTransitionTime
	beat := findCondition(n, v1.NodeReady).LastHeartbeatTime

	waitFor(t, "a periodic post", func() string {
		n, msg := nodeCondition(ctx, c, "n1", v1.NodeReady, v1.ConditionTrue, ReasonReady)
		if msg != "" {
			return msg
		}
		if cond := findCondition(n, v1.NodeReady); !cond.LastHeartbeatTime.After(beat.Time) {
			return "the heartbeat is still " + cond.LastHeartbeatTime.String()
		} else if !cond.LastTransitionTime.Equal(&readySince) {
			return fmt.Sprintf("the transition moved from %v to %v without a change", readySince, cond.LastTransitionTime)
		}
		return ""
	})

	notReady := errors.New("the runtime plugin is restarting")
	tn.ready.Store(&notReady)
	waitFor(t, "NotReady", func() (msg string) {
		n, msg = nodeCondition(ctx, c, "n1", v1.NodeReady, v1.ConditionFalse, ReasonNotReady)
		return msg
	})
	if cond := findCondition(n, v1.NodeReady); !strings.Contains(cond.Message, "the runtime plugin is restarting") || !cond.LastTransitionTime.After(readySince.Time) {
		t.Errorf("NotReady condition %+v; want the reason and a transition after %v", cond, readySince)
	}
	var ok error
	tn.ready.Store(&ok)
	waitFor(t, "Ready again", func() (msg string) {
		_, msg = nodeCondition(ctx, c, "n1", v1.NodeReady, v1.ConditionTrue, ReasonReady)
		return msg
	})
}

// TestLeaseRenewedAndRecreated checks the Lease: named after the node in
// kube-node-lease, held by it for 40 s, owned by the Node; renewed, and
// created again when deleted.
func TestLeaseRenewedAndRecreated(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	ctx := t.Context()
	tn := startNode(t, c, "n1", "n1", nil)
	<-tn.a.Registered()

	var first *coordinationv1.Lease
	waitFor(t, "the lease", func() string {
		var err error
		if first, err = getLease(ctx, c, "n1"); err != nil {
			return err.Error()
		}
		return ""
	})
	node, err := c.Client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := first.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity != "n1" || s.LeaseDurationSeconds == nil || *s.LeaseDurationSeconds != 40 || s.RenewTime == nil {
		t.Errorf("lease spec %+v; want held by n1 for 40 s, renewed", s)
	}
	if o := first.OwnerReferences; len(o) != 1 || o[0].Kind != "Node" || o[0].Name != "n1" || o[0].UID != node.UID {
		t.Errorf("lease owners %+v; want the Node n1 %s", o, node.UID)
	}

	waitFor(t, "a renewal", renewedAfter(ctx, c, "n1", first.Spec.RenewTime.Time))

	if err := c.Client.CoordinationV1().Leases(v1.NamespaceNodeLease).Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lease recreated", func() string {
		l, err := getLease(ctx, c, "n1")
		if err != nil {
			return err.Error()
		}
		if l.UID == first.UID {
			return "still the old lease"
		}
		return ""
	})
}

// TestAPIServerDownAndBack stops the API server: renewals fail and are
// counted; once it is back, the Lease is renewed and the status posted
// again.
func TestAPIServerDownAndBack(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	ctx := t.Context()
	tn := startNode(t, c, "n1", "n1", nil)
	<-tn.a.Registered()
	waitFor(t, "Ready", func() (msg string) {
		_, msg = nodeCondition(ctx, c, "n1", v1.NodeReady, v1.ConditionTrue, ReasonReady)
		return msg
	})

	failures := tn.a.metrics.failures.WithLabelValues(heartbeatLease)
	before := testutil.ToFloat64(failures)
	if err := c.StopAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a failed renewal counted", func() string {
		if got := testutil.ToFloat64(failures); got <= before {
			return fmt.Sprintf("%s{heartbeat=lease} is %v", HeartbeatFailuresMetric, got)
		}
		return ""
	})
	posts := testutil.ToFloat64(tn.a.metrics.statusPosts)
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a renewal after the API server came back", renewedAfter(ctx, c, "n1", time.Now()))
	waitFor(t, "a status post after the restart", func() string {
		if got := testutil.ToFloat64(tn.a.metrics.statusPosts); got <= posts {
			return fmt.Sprintf("%s is still %v", StatusPostsMetric, got)
		}
		return ""
	})

	// A restart in one call is survived too.
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a renewal after RestartAPIServer", renewedAfter(ctx, c, "n1", time.Now()))
}

// TestTakeOverKeepsWhatOthersSet registers over a Node an admin made
// before: the admin's taint, annotation and label stay; the agent's
// labels and status are set.
func TestTakeOverKeepsWhatOthersSet(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	ctx := t.Context()
	taint := v1.Taint{Key: "example.com/maintenance", Value: "true", Effect: v1.TaintEffectNoSchedule}
	made, err := c.Client.CoreV1().Nodes().Create(ctx, &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1",
			Labels:      map[string]string{"example.com/rack": "r7", v1.LabelHostname: "stale"},
			Annotations: map[string]string{"example.com/owner": "ops"}},
		Spec: v1.NodeSpec{Taints: []v1.Taint{taint}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tn := startNode(t, c, "n1", "n1", nil)
	<-tn.a.Registered()
	var n *v1.Node
	waitFor(t, "Ready", func() (msg string) {
		n, msg = nodeCondition(ctx, c, "n1", v1.NodeReady, v1.ConditionTrue, ReasonReady)
		return msg
	})
	// The API server adds node.kubernetes.io/not-ready on create
	// (TaintNodesByCondition); the taints are what the create left.
	if !apiequality.Semantic.DeepEqual(n.Spec.Taints, made.Spec.Taints) || !hasTaint(n.Spec.Taints, taint) {
		t.Errorf("taints %v; want the admin's %v kept, as created: %v", n.Spec.Taints, taint, made.Spec.Taints)
	}
	if n.Annotations["example.com/owner"] != "ops" || n.Labels["example.com/rack"] != "r7" {
		t.Errorf("annotations %v, labels %v; want the admin's kept", n.Annotations, n.Labels)
	}
	if n.Labels[v1.LabelHostname] != "n1" || n.Labels["node.kubernetes.io/pool"] != "test" {
		t.Errorf("labels %v; want the agent's set", n.Labels)
	}
	if got := tn.a.Node(); got == nil || !hasTaint(got.Spec.Taints, taint) {
		t.Errorf("Agent.Node() = %v; want the Node with the admin's taint", got)
	}
}

func hasTaint(ts []v1.Taint, want v1.Taint) bool {
	return slices.ContainsFunc(ts, func(t v1.Taint) bool { return t.MatchTaint(&want) && t.Value == want.Value })
}

// TestNodeDeletedIsRegisteredAgain deletes the Node: the agent registers
// a new one and the Lease's owner follows it.
func TestNodeDeletedIsRegisteredAgain(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	ctx := t.Context()
	tn := startNode(t, c, "n1", "n1", nil)
	<-tn.a.Registered()
	old, err := c.Client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Client.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var uid string
	waitFor(t, "a new Node, Ready", func() string {
		n, msg := nodeCondition(ctx, c, "n1", v1.NodeReady, v1.ConditionTrue, ReasonReady)
		if msg != "" {
			return msg
		}
		if n.UID == old.UID {
			return "still the old Node"
		}
		uid = string(n.UID)
		return ""
	})
	waitFor(t, "the lease owned by the new Node", func() string {
		l, err := getLease(ctx, c, "n1")
		if err != nil {
			return err.Error()
		}
		if len(l.OwnerReferences) != 1 || string(l.OwnerReferences[0].UID) != uid {
			return fmt.Sprintf("owners %v; want %s", l.OwnerReferences, uid)
		}
		return ""
	})
}

// TestNodeWritesOnlyItself runs n1 next to a Node n2 an admin made: n2 is
// never written. An agent misconfigured with n1's credentials and the
// name n2 is refused by the API server (Node authorizer and
// NodeRestriction), counts its failures and never registers.
func TestNodeWritesOnlyItself(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	ctx := t.Context()
	n2, err := c.Client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tn := startNode(t, c, "n1", "n1", nil)
	<-tn.a.Registered()
	posts := testutil.ToFloat64(tn.a.metrics.statusPosts)
	waitFor(t, "two status posts of n1", func() string {
		if got := testutil.ToFloat64(tn.a.metrics.statusPosts); got < posts+2 {
			return fmt.Sprintf("%v posts", got)
		}
		return ""
	})

	wrong := startNode(t, c, "n1", "n2", nil)
	fails := wrong.a.metrics.failures.WithLabelValues(heartbeatRegister)
	waitFor(t, "refused registrations", func() string {
		if got := testutil.ToFloat64(fails); got < 2 {
			return fmt.Sprintf("%v failures", got)
		}
		return ""
	})
	select {
	case <-wrong.a.Registered():
		t.Error("the agent named n2 with n1's credentials registered")
	default:
	}
	now, err := c.Client.CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != n2.ResourceVersion {
		t.Errorf("node n2 was written: resourceVersion %s → %s: %v", n2.ResourceVersion, now.ResourceVersion, now.Status.Conditions)
	}
	if _, err := getLease(ctx, c, "n2"); !apierrors.IsNotFound(err) {
		t.Errorf("lease n2: %v; want not found", err)
	}
}
