package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// snap builds a snapshot from "id=state" words: sandboxes "s1=ready",
// "s1=notready"; containers "c1@s1=created|running|exited|unknown". Every
// object's labels are {"name": id} plus one of the plugin's, which events
// must not carry; its item is sbItem's or ctrItem's, created in the order
// of the words.
func snap(words ...string) snapshot {
	s := snapshot{sandboxes: map[string]sandboxEntry{}, containers: map[string]containerEntry{}}
	states := map[string]criapi.ContainerState{
		"created": criapi.ContainerState_CONTAINER_CREATED, "running": criapi.ContainerState_CONTAINER_RUNNING,
		"exited": criapi.ContainerState_CONTAINER_EXITED, "unknown": criapi.ContainerState_CONTAINER_UNKNOWN,
	}
	for i, w := range words {
		obj, state, _ := strings.Cut(w, "=")
		id, sandbox, isContainer := strings.Cut(obj, "@")
		if isContainer {
			item := ctrItem(id, sandbox, int64(i+1))
			item.State = states[state]
			s.containers[id] = containerEntryOf(item)
			continue
		}
		item := sbItem(id, int64(i+1))
		if state != "ready" {
			item.State = criapi.PodSandboxState_SANDBOX_NOTREADY
		}
		s.sandboxes[id] = sandboxEntryOf(item)
	}
	return s
}

// sbItem is a ready sandbox as CRI lists it, created at created.
func sbItem(id string, created int64) *criapi.PodSandbox {
	return &criapi.PodSandbox{
		Id: id, Metadata: &criapi.PodSandboxMetadata{Name: id, Namespace: "ns", Uid: id + "-uid", Attempt: 1},
		State: criapi.PodSandboxState_SANDBOX_READY, CreatedAt: created,
		Labels: map[string]string{"name": id, labelSandboxID: ""}, Annotations: map[string]string{"note": id},
	}
}

// ctrItem is a created container of sandbox as CRI lists it, created at
// created.
func ctrItem(id, sandbox string, created int64) *criapi.Container {
	return &criapi.Container{
		Id: id, PodSandboxId: sandbox, Metadata: &criapi.ContainerMetadata{Name: id, Attempt: 2},
		Image: &criapi.ImageSpec{Image: "sha256:" + id}, ImageRef: "ref-" + id,
		State: criapi.ContainerState_CONTAINER_CREATED, CreatedAt: created,
		Labels: map[string]string{"name": id, labelSandboxID: sandbox}, Annotations: map[string]string{"note": id},
	}
}

// render writes events as "TYPE id" lines, checking their labels.
func render(t *testing.T, events []Event) []string {
	t.Helper()
	names := map[EventType]string{
		EventContainerCreated: "created", EventContainerStarted: "started", EventContainerExited: "exited", EventContainerRemoved: "removed",
		EventSandboxReady: "sandbox-ready", EventSandboxNotReady: "sandbox-notready", EventSandboxRemoved: "sandbox-removed",
	}
	var out []string
	for _, ev := range events {
		id := ev.SandboxID
		if ev.ContainerID != "" {
			id = ev.ContainerID + "@" + ev.SandboxID
		}
		if want := map[string]string{"name": strings.Split(id, "@")[0]}; !reflect.DeepEqual(ev.Labels, want) || ev.Time != 42 {
			t.Errorf("%s %s: got labels %v time %d; want %v, 42", names[ev.Type], id, ev.Labels, ev.Time, want)
		}
		out = append(out, fmt.Sprintf("%s %s", names[ev.Type], id))
	}
	return out
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur []string
		want      []string
	}{
		{"nothing changed", []string{"s1=ready", "c1@s1=running"}, []string{"s1=ready", "c1@s1=running"}, nil},
		{"a sandbox appears", nil, []string{"s1=ready"}, []string{"sandbox-ready s1"}},
		{"a stopped sandbox appears", nil, []string{"s1=notready"}, []string{"sandbox-notready s1"}},
		{"a sandbox stops", []string{"s1=ready"}, []string{"s1=notready"}, []string{"sandbox-notready s1"}},
		{"a sandbox goes", []string{"s1=notready"}, nil, []string{"sandbox-removed s1"}},
		{"a container is created", []string{"s1=ready"}, []string{"s1=ready", "c1@s1=created"}, []string{"created c1@s1"}},
		{"a container appears running", []string{"s1=ready"}, []string{"s1=ready", "c1@s1=running"}, []string{"created c1@s1", "started c1@s1"}},
		{"a container appears exited", []string{"s1=ready"}, []string{"s1=ready", "c1@s1=exited"}, []string{"created c1@s1", "exited c1@s1"}},
		{"a container starts", []string{"c1@s1=created"}, []string{"c1@s1=running"}, []string{"started c1@s1"}},
		{"a container exits", []string{"c1@s1=running"}, []string{"c1@s1=exited"}, []string{"exited c1@s1"}},
		{"a created container exits", []string{"c1@s1=created"}, []string{"c1@s1=exited"}, []string{"exited c1@s1"}},
		{"a container goes", []string{"c1@s1=exited"}, nil, []string{"removed c1@s1"}},
		{"a running container goes: its exit is not lost", []string{"c1@s1=running"}, nil, []string{"exited c1@s1", "removed c1@s1"}},
		{"unknown states make no event", []string{"c1@s1=running", "c2@s1=unknown"}, []string{"c1@s1=unknown", "c2@s1=exited", "c3@s1=unknown"}, nil},
		{
			"a whole pod in one interval, in reading order",
			[]string{"s0=ready", "c0@s0=running"},
			[]string{"s1=ready", "c2@s1=running", "c1@s1=created"},
			[]string{"sandbox-ready s1", "created c1@s1", "created c2@s1", "started c2@s1", "exited c0@s0", "removed c0@s0", "sandbox-removed s0"},
		},
		{
			"pods stop and go together",
			[]string{"s1=ready", "s2=ready", "c1@s1=running", "c2@s2=running"},
			[]string{"s1=notready", "c1@s1=exited"},
			[]string{"exited c1@s1", "exited c2@s2", "removed c2@s2", "sandbox-notready s1", "sandbox-removed s2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, diff(snap(tt.prev...), snap(tt.cur...), 42))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name   string
		before []string
		change change
		want   []string
		after  []string
	}{
		{"run a sandbox", nil, change{kind: sandboxReadied, sandboxID: "new", sandbox: sbItem("new", 1)}, []string{"sandbox-ready new"}, []string{"new=ready"}},
		{"run a sandbox seen already", []string{"new=ready"}, change{kind: sandboxReadied, sandboxID: "new", sandbox: sbItem("new", 1)}, nil, []string{"new=ready"}},
		{"stop a sandbox", []string{"s1=ready"}, change{kind: sandboxStopped, sandboxID: "s1"}, []string{"sandbox-notready s1"}, []string{"s1=notready"}},
		{"stop a stopped sandbox", []string{"s1=notready"}, change{kind: sandboxStopped, sandboxID: "s1"}, nil, []string{"s1=notready"}},
		{
			"stop a sandbox with running containers",
			[]string{"s1=ready", "c1@s1=running", "c2@s1=created", "c3@s1=exited"},
			change{kind: sandboxStopped, sandboxID: "s1"},
			[]string{"exited c1@s1", "sandbox-notready s1"},
			[]string{"s1=notready", "c1@s1=exited", "c2@s1=created", "c3@s1=exited"},
		},
		{"run a sandbox not looked up", nil, change{kind: sandboxReadied, sandboxID: "new"}, nil, nil},
		{"create a container not looked up", []string{"s1=ready"}, change{kind: containerCreated, sandboxID: "s1", containerID: "new"}, nil, []string{"s1=ready"}},
		{"stop an unseen sandbox", nil, change{kind: sandboxStopped, sandboxID: "s1"}, nil, nil},
		{
			"remove a sandbox and its containers",
			[]string{"s1=ready", "s2=ready", "c2@s1=running", "c1@s1=exited", "c3@s2=running"},
			change{kind: sandboxRemoved, sandboxID: "s1"},
			[]string{"removed c1@s1", "exited c2@s1", "removed c2@s1", "sandbox-removed s1"},
			[]string{"s2=ready", "c3@s2=running"},
		},
		{"remove an unseen sandbox", nil, change{kind: sandboxRemoved, sandboxID: "s1"}, nil, nil},
		{"create a container", []string{"s1=ready"}, change{kind: containerCreated, sandboxID: "s1", containerID: "new", container: ctrItem("new", "s1", 1)}, []string{"created new@s1"}, []string{"s1=ready", "new@s1=created"}},
		{"create a container seen already", []string{"new@s1=running"}, change{kind: containerCreated, sandboxID: "s1", containerID: "new", container: ctrItem("new", "s1", 1)}, nil, []string{"new@s1=running"}},
		{"start a container", []string{"c1@s1=created"}, change{kind: containerStarted, containerID: "c1"}, []string{"started c1@s1"}, []string{"c1@s1=running"}},
		{"start a running container", []string{"c1@s1=running"}, change{kind: containerStarted, containerID: "c1"}, nil, []string{"c1@s1=running"}},
		{"start an exited container", []string{"c1@s1=exited"}, change{kind: containerStarted, containerID: "c1"}, nil, []string{"c1@s1=exited"}},
		{"start an unseen container", nil, change{kind: containerStarted, containerID: "c1"}, nil, nil},
		{"stop a container", []string{"c1@s1=running"}, change{kind: containerExited, containerID: "c1"}, []string{"exited c1@s1"}, []string{"c1@s1=exited"}},
		{"stop an exited container", []string{"c1@s1=exited"}, change{kind: containerExited, containerID: "c1"}, nil, []string{"c1@s1=exited"}},
		{"remove a container", []string{"c1@s1=exited"}, change{kind: containerRemoved, containerID: "c1"}, []string{"removed c1@s1"}, nil},
		{"remove an unseen container", nil, change{kind: containerRemoved, containerID: "c1"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snap(tt.before...)
			if got := render(t, s.apply(tt.change, 42)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events: got %q; want %q", got, tt.want)
			}
			if want := snap(tt.after...); !sameStates(s, want) {
				t.Errorf("after: got %+v; want %+v", s, want)
			}
		})
	}
}

func TestKeep(t *testing.T) {
	// A listing that began before the plugin created c2, stopped c1 and
	// removed s0 must not undo those changes; other objects come from it.
	stale := snap("s0=ready", "s1=ready", "c1@s1=running", "c3@s1=running")
	noted := snap("s1=ready", "c1@s1=exited", "c2@s1=created", "c3@s1=created")
	stale.keep(noted, map[string]bool{"s0": true, "c1": true, "c2": true})
	if want := snap("s1=ready", "c1@s1=exited", "c2@s1=created", "c3@s1=running"); !sameStates(stale, want) {
		t.Errorf("got %+v; want %+v", stale, want)
	}
}

// sameStates compares snapshots by objects and states.
func sameStates(a, b snapshot) bool {
	if len(a.sandboxes) != len(b.sandboxes) || len(a.containers) != len(b.containers) {
		return false
	}
	for id, sb := range a.sandboxes {
		if other, ok := b.sandboxes[id]; !ok || other.state != sb.state {
			return false
		}
	}
	for id, c := range a.containers {
		if other, ok := b.containers[id]; !ok || other.state != c.state || other.sandboxID != c.sandboxID {
			return false
		}
	}
	return true
}
