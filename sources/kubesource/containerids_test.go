package kubesource

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// statusWithIDs is a status whose every container ID field is id(n), n
// numbering the fields.
func statusWithIDs(id func(n string) string) v1.PodStatus {
	term := func(n string) *v1.ContainerStateTerminated { return &v1.ContainerStateTerminated{ContainerID: id(n)} }
	return v1.PodStatus{
		InitContainerStatuses: []v1.ContainerStatus{{Name: "init", ContainerID: id("1"), State: v1.ContainerState{Terminated: term("1")}}},
		ContainerStatuses: []v1.ContainerStatus{
			{Name: "app", ContainerID: id("2"), State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
				LastTerminationState: v1.ContainerState{Terminated: term("3")}},
			{Name: "waiting", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
		},
		EphemeralContainerStatuses: []v1.ContainerStatus{{Name: "debug", ContainerID: id("4")}},
	}
}

func TestContainerIDTypes(t *testing.T) {
	raw := func(n string) string { return "abc" + n }
	typed := func(n string) string { return "containerd://abc" + n }
	other := func(n string) string { return "memory://abc" + n }
	tests := []struct {
		name string
		in   v1.PodStatus
		set  string // "": strip
		want v1.PodStatus
	}{
		{"set the type on raw IDs", statusWithIDs(raw), "containerd", statusWithIDs(typed)},
		{"setting is idempotent", statusWithIDs(typed), "containerd", statusWithIDs(typed)},
		{"an ID of another type is kept", statusWithIDs(other), "containerd", statusWithIDs(other)},
		{"strip typed IDs", statusWithIDs(typed), "", statusWithIDs(raw)},
		{"strip any type", statusWithIDs(other), "", statusWithIDs(raw)},
		{"strip leaves raw IDs", statusWithIDs(raw), "", statusWithIDs(raw)},
		{"empty type sets nothing", statusWithIDs(raw), "-", statusWithIDs(raw)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := *tt.in.DeepCopy()
			switch tt.set {
			case "":
				StripContainerIDTypes(&got)
			case "-":
				SetContainerIDType(&got, "")
			default:
				SetContainerIDType(&got, tt.set)
			}
			if !apiequality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
