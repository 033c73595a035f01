package node

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources"
)

func pod(uid, image string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p" + uid, UID: types.UID(uid)},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: image}}},
	}
}

func deleted(p *v1.Pod, grace int64) *v1.Pod {
	p = p.DeepCopy()
	now := metav1.NewTime(time.Unix(100, 0))
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace
	return p
}

// gated gives p the readiness gate example.com/lb, its condition with
// status st in the pod's status ("" for none).
func gated(p *v1.Pod, st v1.ConditionStatus) *v1.Pod {
	p = p.DeepCopy()
	p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/lb"}}
	if st != "" {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: "example.com/lb", Status: st})
	}
	return p
}

// withReadyCondition adds the node's own Ready condition to p's status.
func withReadyCondition(p *v1.Pod) *v1.Pod {
	p = p.DeepCopy()
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue})
	return p
}

func desired(synced bool, pods ...*v1.Pod) sources.Desired {
	d := sources.Desired{Synced: synced}
	for _, p := range pods {
		d.Pods = append(d.Pods, sources.Pod{Pod: p})
	}
	return d
}

type step struct {
	next sources.Desired
	want []string // "create 1", "update 2", "kill 3"
}

func TestDesiredSetApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"new pods are created", []step{
			{desired(true, pod("1", "a"), pod("2", "a")), []string{"create 1", "create 2"}},
		}},
		{"same pods again change nothing", []step{
			{desired(true, pod("1", "a")), []string{"create 1"}},
			{desired(true, pod("1", "a")), nil},
		}},
		{"changed spec is an update", []step{
			{desired(true, pod("1", "a")), []string{"create 1"}},
			{desired(true, pod("1", "b")), []string{"update 1"}},
		}},
		{"deletion request is an update", []step{
			{desired(true, pod("1", "a")), []string{"create 1"}},
			{desired(true, deleted(pod("1", "a"), 5)), []string{"update 1"}},
		}},
		{"a pod that leaves the set is killed", []step{
			{desired(true, pod("1", "a"), pod("2", "a")), []string{"create 1", "create 2"}},
			{desired(true, pod("2", "a")), []string{"kill 1"}},
		}},
		// The upstream spec "Pods should support pod readiness gates": a
		// gate's condition patched onto the API pod must reach the worker,
		// or Ready never follows it; the node's own status writes (any
		// other condition) must not.
		{"a readiness gate's condition is an update, other status is not", []step{
			{desired(true, gated(pod("1", "a"), "")), []string{"create 1"}},
			{desired(true, gated(pod("1", "a"), v1.ConditionTrue)), []string{"update 1"}},
			{desired(true, withReadyCondition(gated(pod("1", "a"), v1.ConditionTrue))), nil},
			{desired(true, gated(pod("1", "a"), v1.ConditionFalse)), []string{"update 1"}},
			{desired(true, withReadyCondition(pod("1", "a"))), []string{"update 1"}},
		}},
		{"an edited static pod is a new uid: create new, kill old", []step{
			{desired(true, pod("1", "a")), []string{"create 1"}},
			{desired(true, pod("9", "b")), []string{"create 9", "kill 1"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesiredSet()
			for i, s := range tc.steps {
				var got []string
				updates, commit := d.apply(s.next, time.Unix(1, 0))
				commit()
				for _, u := range updates {
					got = append(got, u.UpdateType.String()+" "+string(u.Pod.UID))
				}
				if len(got) != len(s.want) {
					t.Fatalf("step %d: updates %q; want %q", i, got, s.want)
				}
				for j := range got {
					if got[j] != s.want[j] {
						t.Fatalf("step %d: updates %q; want %q", i, got, s.want)
					}
				}
			}
		})
	}
}

func TestDesiredSetIsConfigSource(t *testing.T) {
	var _ lifecycle.ConfigSource = newDesiredSet()
	d := newDesiredSet()
	if d.SourcesReady() {
		t.Error("ready before any source reported")
	}
	_, commit := d.apply(desired(true, pod("1", "a")), time.Unix(1, 0))
	commit()
	pods, mirrors := d.Pods()
	if !d.SourcesReady() || len(pods) != 1 || mirrors != nil {
		t.Errorf("after apply: ready %v, pods %d, mirrors %v", d.SourcesReady(), len(pods), mirrors)
	}
}
