package node

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

func TestLeavingPods(t *testing.T) {
	now := time.Unix(200, 0)
	kill := func(uid string) lifecycle.UpdatePodOptions {
		return lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: gone(pod(uid, "a"), now)}
	}
	create := func(uid string) lifecycle.UpdatePodOptions {
		return lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod(uid, "a")}
	}
	type step struct {
		record   []lifecycle.UpdatePodOptions
		desired  []string
		finished []string
		released []string // the workers told that they finished these
		kept     int      // entries held before the listing (checked when not 0)
		want     string   // UIDs listed, comma-separated
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a killed pod is listed until finished", []step{
			{record: []lifecycle.UpdatePodOptions{create("1"), kill("2")}, desired: []string{"1"}, want: "2"},
			{want: "2"},
			{finished: []string{"2"}, want: ""},
			{want: ""},
		}},
		{"a pod desired again is listed from the desired set only", []step{
			{record: []lifecycle.UpdatePodOptions{kill("1")}, want: "1"},
			{desired: []string{"1"}, want: ""},
		}},
		{"a finished pod is forgotten even if it comes back", []step{
			{record: []lifecycle.UpdatePodOptions{kill("1")}, finished: []string{"1"}, want: ""},
			{finished: nil, want: ""},
		}},
		{"a pod whose worker finished it is forgotten", []step{
			{record: []lifecycle.UpdatePodOptions{kill("1"), kill("2")}, released: []string{"1"}, want: "2"},
		}},
		{"a finished pod is forgotten at the next change", []step{
			{record: []lifecycle.UpdatePodOptions{kill("1"), kill("2")}, want: "1,2"},
			{record: []lifecycle.UpdatePodOptions{kill("3")}, finished: []string{"1"}, kept: 2, want: "2,3"},
		}},
		{"several, in name order", []step{
			{record: []lifecycle.UpdatePodOptions{kill("3"), kill("1"), kill("2")}, finished: []string{"2"}, want: "1,3"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l leavingPods
			for i, s := range tc.steps {
				desired, finished := map[types.UID]bool{}, map[types.UID]bool{}
				for _, u := range s.desired {
					desired[types.UID(u)] = true
				}
				for _, u := range s.finished {
					finished[types.UID(u)] = true
				}
				isFinished := func(uid types.UID) bool { return finished[uid] }
				l.record(s.record, isFinished)
				for _, u := range s.released {
					l.forget(types.UID(u))
				}
				if s.kept != 0 && len(l.pods) != s.kept {
					t.Errorf("step %d: %d entries held; want %d", i, len(l.pods), s.kept)
				}
				var got []string
				for _, p := range l.list(desired, isFinished) {
					if p.DeletionTimestamp == nil {
						t.Errorf("step %d: pod %s listed without its deletionTimestamp", i, p.UID)
					}
					got = append(got, string(p.UID))
				}
				if strings.Join(got, ",") != s.want {
					t.Errorf("step %d: listed %v; want %q", i, got, s.want)
				}
			}
		})
	}
}

// TestLeavingPodsForgottenWhenFinished: the pods that left the desired set
// are forgotten as their workers finish them, not only when someone lists
// pods through the local API.
func TestLeavingPodsForgottenWhenFinished(t *testing.T) {
	defer goleak.VerifyNone(t)
	a := newAdmitNode(t)
	n := a.Node
	stop := a.runWorkers(&lifecycletest.FakeSyncer{})
	const count = 300
	var pods []*v1.Pod
	for i := range count {
		pods = append(pods, pod(strconv.Itoa(i), "a"))
	}
	a.deliver(pods...)
	a.deliver() // all leave the set
	for {
		wake := n.finishedPods.C()
		done := 0
		for _, p := range pods {
			if st, ok := n.core.Inspect(p.UID); ok && st.Finished {
				done++
			}
		}
		if done == count {
			break
		}
		<-wake
	}
	stop() // every worker loop returned, after telling that its pod finished
	n.leaving.mu.Lock()
	kept := len(n.leaving.pods)
	n.leaving.mu.Unlock()
	if kept != 0 {
		t.Errorf("%d pods that left the desired set are kept after their workers finished them; want 0", kept)
	}
}
