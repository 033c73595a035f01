package kubenode

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var fullCapacity = v1.ResourceList{
	v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi"),
	v1.ResourcePods: resource.MustParse("110"), v1.ResourceEphemeralStorage: resource.MustParse("10Gi"),
}

func TestWantConditions(t *testing.T) {
	noStorage := fullCapacity.DeepCopy()
	delete(noStorage, v1.ResourceEphemeralStorage)
	delete(noStorage, v1.ResourcePods)
	tests := []struct {
		name     string
		h        Health
		capacity v1.ResourceList
		want     map[v1.NodeConditionType]string // type → status/reason
		message  string                          // in Ready's message
	}{
		{"healthy", Health{}, fullCapacity, map[v1.NodeConditionType]string{
			v1.NodeMemoryPressure: "False/KubeletHasSufficientMemory", v1.NodeDiskPressure: "False/KubeletHasNoDiskPressure",
			v1.NodePIDPressure: "False/KubeletHasSufficientPID", v1.NodeReady: "True/KubeletReady"}, "podhost is posting ready status"},
		{"pressure everywhere", Health{MemoryPressure: true, DiskPressure: true, PIDPressure: true}, fullCapacity, map[v1.NodeConditionType]string{
			v1.NodeMemoryPressure: "True/KubeletHasInsufficientMemory", v1.NodeDiskPressure: "True/KubeletHasDiskPressure",
			v1.NodePIDPressure: "True/KubeletHasInsufficientPID", v1.NodeReady: "True/KubeletReady"}, ""},
		{"runtime down", Health{NotReady: []string{"container runtime not ready: plugin exited"}}, fullCapacity,
			map[v1.NodeConditionType]string{v1.NodeReady: "False/KubeletNotReady"}, "podhost is not ready: container runtime not ready: plugin exited"},
		{"capacity missing", Health{NotReady: []string{"a"}}, noStorage,
			map[v1.NodeConditionType]string{v1.NodeReady: "False/KubeletNotReady"}, "a; missing node capacity for resources: pods, ephemeral-storage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wantConditions(tt.h, tt.capacity)
			if len(got) != 4 || got[3].typ != v1.NodeReady {
				t.Fatalf("conditions %v; want four, Ready last", got)
			}
			for _, c := range got {
				if w, ok := tt.want[c.typ]; ok && string(c.status)+"/"+c.reason != w {
					t.Errorf("%s = %s/%s; want %s", c.typ, c.status, c.reason, w)
				}
				if c.typ == v1.NodeReady && !strings.Contains(c.message, tt.message) {
					t.Errorf("Ready message %q; want %q in it", c.message, tt.message)
				}
			}
		})
	}
}

// TestSetConditionsTransitions steps one node's conditions through time:
// the heartbeat moves on every step, the transition only when the status
// changes; a condition the agent does not own is kept.
func TestSetConditionsTransitions(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(1000+int64(s), 0)) }
	foreign := v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionFalse, Reason: "RouteCreated", LastTransitionTime: at(0)}
	steps := []struct {
		h                    Health
		now                  int
		ready, memory        v1.ConditionStatus
		readySince, memSince int
	}{
		{Health{}, 1, v1.ConditionTrue, v1.ConditionFalse, 1, 1},
		{Health{}, 2, v1.ConditionTrue, v1.ConditionFalse, 1, 1},
		{Health{MemoryPressure: true}, 3, v1.ConditionTrue, v1.ConditionTrue, 1, 3},
		{Health{MemoryPressure: true, NotReady: []string{"x"}}, 4, v1.ConditionFalse, v1.ConditionTrue, 4, 3},
		{Health{MemoryPressure: true, NotReady: []string{"y"}}, 5, v1.ConditionFalse, v1.ConditionTrue, 4, 3},
		{Health{}, 6, v1.ConditionTrue, v1.ConditionFalse, 6, 6},
	}
	conds := []v1.NodeCondition{foreign}
	for i, s := range steps {
		conds = setConditions(conds, wantConditions(s.h, fullCapacity), at(s.now))
		if len(conds) != 5 || conds[0] != foreign {
			t.Fatalf("step %d: conditions %v; want the foreign one kept first, then four", i, conds)
		}
		got := map[v1.NodeConditionType]v1.NodeCondition{}
		for _, c := range conds {
			got[c.Type] = c
		}
		for _, check := range []struct {
			typ    v1.NodeConditionType
			status v1.ConditionStatus
			since  int
		}{{v1.NodeReady, s.ready, s.readySince}, {v1.NodeMemoryPressure, s.memory, s.memSince}} {
			c := got[check.typ]
			if c.Status != check.status || !c.LastTransitionTime.Equal(ptrTime(at(check.since))) || !c.LastHeartbeatTime.Equal(ptrTime(at(s.now))) {
				t.Errorf("step %d: %s = %s since %v, beat %v; want %s since %v, beat %v", i, check.typ, c.Status,
					c.LastTransitionTime.Unix(), c.LastHeartbeatTime.Unix(), check.status, at(check.since).Unix(), at(s.now).Unix())
			}
		}
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

func TestStatusChanged(t *testing.T) {
	base := &v1.NodeStatus{Capacity: fullCapacity}
	base.Conditions = setConditions(nil, wantConditions(Health{}, fullCapacity), metav1.NewTime(time.Unix(10, 0)))
	tests := []struct {
		name string
		edit func(*v1.NodeStatus)
		want bool
	}{
		{"same", func(*v1.NodeStatus) {}, false},
		{"heartbeat only", func(s *v1.NodeStatus) {
			s.Conditions = setConditions(s.Conditions, wantConditions(Health{}, fullCapacity), metav1.NewTime(time.Unix(20, 0)))
		}, false},
		{"reordered", func(s *v1.NodeStatus) { s.Conditions[0], s.Conditions[3] = s.Conditions[3], s.Conditions[0] }, false},
		{"a transition", func(s *v1.NodeStatus) {
			s.Conditions = setConditions(s.Conditions, wantConditions(Health{DiskPressure: true}, fullCapacity), metav1.NewTime(time.Unix(20, 0)))
		}, true},
		{"capacity", func(s *v1.NodeStatus) { s.Capacity[v1.ResourcePods] = resource.MustParse("10") }, true},
		{"runtime version", func(s *v1.NodeStatus) { s.NodeInfo.ContainerRuntimeVersion = "memory://2" }, true},
		{"port", func(s *v1.NodeStatus) { s.DaemonEndpoints.KubeletEndpoint.Port = 1 }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base.DeepCopy()
			tt.edit(s)
			if got := statusChanged(base, s); got != tt.want {
				t.Errorf("statusChanged = %v; want %v", got, tt.want)
			}
		})
	}
}
