package node

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
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
		want     string // UIDs listed, comma-separated
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
		{"several, in name order", []step{
			{record: []lifecycle.UpdatePodOptions{kill("3"), kill("1"), kill("2")}, finished: []string{"2"}, want: "1,3"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l leavingPods
			for i, s := range tc.steps {
				l.record(s.record)
				desired, finished := map[types.UID]bool{}, map[types.UID]bool{}
				for _, u := range s.desired {
					desired[types.UID(u)] = true
				}
				for _, u := range s.finished {
					finished[types.UID(u)] = true
				}
				var got []string
				for _, p := range l.list(desired, func(uid types.UID) bool { return finished[uid] }) {
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
