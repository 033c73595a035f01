package kubenode

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

func testObserved() observed {
	return observed{
		labels:     nodeLabels("n1", map[string]string{"node.kubernetes.io/pool": "a"}),
		addresses:  []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.2"}, {Type: v1.NodeHostName, Address: "n1"}},
		daemonPort: 10250, capacity: fullCapacity, allocatable: fullCapacity,
		info: v1.NodeSystemInfo{KubeletVersion: KubeVersion, ContainerRuntimeVersion: "memory://1"},
	}
}

// TestStatusPatch applies the patch the agent sends to the Node as an admin
// left it: the admin's taint, annotation, label, condition and extended
// resource stay; the addresses are replaced whole; the patch carries the
// read's resourceVersion.
func TestStatusPatch(t *testing.T) {
	orig := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "42", Labels: map[string]string{"example.com/rack": "r1", v1.LabelHostname: "old"},
			Annotations: map[string]string{"example.com/owner": "ops"}},
		Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: "example.com/maint", Effect: v1.TaintEffectNoSchedule}}},
		Status: v1.NodeStatus{
			Addresses:  []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}, {Type: v1.NodeInternalIP, Address: "10.0.0.9"}},
			Capacity:   v1.ResourceList{"example.com/dongle": fullCapacity[v1.ResourcePods]},
			Conditions: []v1.NodeCondition{{Type: "example.com/Fan", Status: v1.ConditionTrue}},
		},
	}
	want := applyNode(orig, testObserved(), time.Unix(100, 0))
	want.Spec.Taints = nil // the patch must not carry the spec
	p, err := statusPatch(orig, want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p), `"resourceVersion":"42"`) || !strings.Contains(string(p), `"$patch":"replace"`) {
		t.Errorf("patch %s; want the resourceVersion precondition and the addresses replaced", p)
	}
	origJSON, _ := json.Marshal(orig)
	merged, err := strategicpatch.StrategicMergePatch(origJSON, p, v1.Node{})
	if err != nil {
		t.Fatal(err)
	}
	var got v1.Node
	if err := json.Unmarshal(merged, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Taints) != 1 || got.Annotations["example.com/owner"] != "ops" || got.Labels["example.com/rack"] != "r1" {
		t.Errorf("the admin's fields were lost: taints %v annotations %v labels %v", got.Spec.Taints, got.Annotations, got.Labels)
	}
	if got.Labels[v1.LabelHostname] != "n1" || got.Labels["node.kubernetes.io/pool"] != "a" {
		t.Errorf("labels %v; want the agent's set", got.Labels)
	}
	if a := got.Status.Addresses; len(a) != 2 || a[0].Address != "10.0.0.2" || a[1].Type != v1.NodeHostName {
		t.Errorf("addresses %v; want exactly the agent's", a)
	}
	if _, ok := got.Status.Capacity["example.com/dongle"]; !ok || len(got.Status.Conditions) != 5 {
		t.Errorf("capacity %v conditions %v; want the extended resource and the foreign condition kept", got.Status.Capacity, got.Status.Conditions)
	}
}

// fakeAgent is an agent over a fake clientset with a fake clock, for the
// API-call paths; the loops are tested against a real API server.
func fakeAgent(t *testing.T, objs ...runtime.Object) (*Agent, *fake.Clientset, *testingclock.FakeClock) {
	t.Helper()
	cs := fake.NewClientset(objs...)
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	o := validOptions()
	o.Client, o.Clock = cs, clk
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	a.m = fixtureMachine("2000000", 50, 10)
	a.info = a.m.systemInfo()
	return a, cs, clk
}

func newStatusLoop(a *Agent) *statusLoop {
	return &statusLoop{a: a, report: reportPolicy{frequency: a.o.ReportFrequency, rand: func() float64 { return 0.5 }},
		hb: heartbeat{interval: a.o.StatusFrequency, rand: func() float64 { return 0 }}}
}

func countActions(cs *fake.Clientset, verb, resource string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

// TestRegisterTakesOver registers over an existing Node: the create is
// refused, the Node is read and patched, and its taint stays.
func TestRegisterTakesOver(t *testing.T) {
	existing := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1"},
		Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: "example.com/maint", Effect: v1.TaintEffectNoSchedule}}}}
	a, cs, _ := fakeAgent(t, existing)
	s := newStatusLoop(a)
	if err := s.register(t.Context()); err != nil {
		t.Fatal(err)
	}
	n, err := cs.CoreV1().Nodes().Get(t.Context(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Spec.Taints) != 1 || findCondition(n, v1.NodeReady) == nil || n.Labels[v1.LabelHostname] != "n1" {
		t.Errorf("node after take-over: taints %v conditions %v labels %v", n.Spec.Taints, n.Status.Conditions, n.Labels)
	}
	if got := countActions(cs, "patch", "nodes"); got != 1 {
		t.Errorf("%d patches; want 1", got)
	}
	if a.nodeUID() != "u1" || a.Node() == nil {
		t.Errorf("agent's node uid %q", a.nodeUID())
	}
}

// TestPostRereadsOnConflict makes the first patch conflict: the agent
// reads the Node again and patches once more.
func TestPostRereadsOnConflict(t *testing.T) {
	a, cs, _ := fakeAgent(t, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	conflicts := 1
	cs.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("changed"))
		}
		return false, nil, nil
	})
	s := newStatusLoop(a)
	n, err := s.post(t.Context(), a.observe(t.Context()))
	if err != nil || findCondition(n, v1.NodeReady) == nil {
		t.Fatalf("post: %v, %v", n, err)
	}
	if gets, patches := countActions(cs, "get", "nodes"), countActions(cs, "patch", "nodes"); gets != 2 || patches != 2 {
		t.Errorf("%d gets, %d patches; want 2 of each", gets, patches)
	}

	cs.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("changed"))
	})
	if _, err := s.post(t.Context(), a.observe(t.Context())); !apierrors.IsConflict(err) {
		t.Errorf("post with every patch conflicting: %v; want a conflict after %d tries", err, maxPostTries)
	}
}

func TestPostNodeGone(t *testing.T) {
	a, _, _ := fakeAgent(t)
	if _, err := newStatusLoop(a).post(t.Context(), a.observe(t.Context())); !errors.Is(err, errNodeGone) {
		t.Errorf("post without a Node: %v; want errNodeGone", err)
	}
}

// TestRenewLease walks the lease through creation, a renewal from the one
// last written, a deletion and a conflict.
func TestRenewLease(t *testing.T) {
	a, cs, clk := fakeAgent(t)
	a.setNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1"}})
	ctx := t.Context()
	leases := cs.CoordinationV1().Leases(v1.NamespaceNodeLease)
	check := func(step string, l *coordinationv1.Lease, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		stored, err := leases.Get(ctx, "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		s := stored.Spec
		if *s.HolderIdentity != "n1" || *s.LeaseDurationSeconds != 40 || !s.RenewTime.Time.Equal(clk.Now()) ||
			len(stored.OwnerReferences) != 1 || stored.OwnerReferences[0].UID != "u1" || stored.OwnerReferences[0].Kind != "Node" {
			t.Errorf("%s: lease %+v owners %v; want held by n1 for 40 s, renewed at %v, owned by Node u1", step, s, stored.OwnerReferences, clk.Now())
		}
	}
	l, err := a.renewLease(ctx, nil)
	check("create", l, err)
	if n := countActions(cs, "create", "leases"); n != 1 {
		t.Errorf("%d creates", n)
	}

	clk.Step(10 * time.Second)
	cs.ClearActions()
	l, err = a.renewLease(ctx, l)
	check("renew", l, err)
	if gets := countActions(cs, "get", "leases"); gets != 1 { // check's own get
		t.Errorf("renewing from the last lease read it first: %v", cs.Actions())
	}

	clk.Step(10 * time.Second)
	if err := leases.Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err = a.renewLease(ctx, l)
	check("recreate", l, err)

	clk.Step(10 * time.Second)
	conflicts := 1
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "leases"}, "n1", errors.New("changed"))
	})
	l, err = a.renewLease(ctx, l)
	check("after a conflict", l, err)
}

func TestRunTwice(t *testing.T) {
	a, _, _ := fakeAgent(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := a.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with an ended context: %v", err)
	}
	if err := a.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "called already") {
		t.Errorf("second Run: %v", err)
	}
}
