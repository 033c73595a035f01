package main

import (
	"testing"

	apievents "github.com/containerd/containerd/api/events"
	ctrdtypes "github.com/containerd/containerd/api/types"
	"github.com/containerd/typeurl/v2"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func TestTaskEventOf(t *testing.T) {
	tests := []struct {
		name   string
		ns     string
		topic  string
		event  any
		want   taskEvent
		wantOK bool
	}{
		{"a task starts", "k8s.io", "/tasks/start", &apievents.TaskStart{ContainerID: "c1", Pid: 10}, taskEvent{topicStarted, "c1"}, true},
		{"an init process exits", "k8s.io", "/tasks/exit", &apievents.TaskExit{ContainerID: "c1", ID: "c1", ExitStatus: 3}, taskEvent{topicExited, "c1"}, true},
		{"an exec process exits", "k8s.io", "/tasks/exit", &apievents.TaskExit{ContainerID: "c1", ID: "exec-1"}, taskEvent{}, false},
		{"a task is deleted", "k8s.io", "/tasks/delete", &apievents.TaskDelete{ContainerID: "c1", ID: "c1"}, taskEvent{topicExited, "c1"}, true},
		{"a task is deleted, no process ID", "k8s.io", "/tasks/delete", &apievents.TaskDelete{ContainerID: "c1"}, taskEvent{topicExited, "c1"}, true},
		{"an exec process is deleted", "k8s.io", "/tasks/delete", &apievents.TaskDelete{ContainerID: "c1", ID: "exec-1"}, taskEvent{}, false},
		{"a container is made", "k8s.io", "/containers/create", &apievents.ContainerCreate{ID: "c1", Image: "busybox"}, taskEvent{topicCreated, "c1"}, true},
		{"a container is deleted", "k8s.io", "/containers/delete", &apievents.ContainerDelete{ID: "c1"}, taskEvent{topicRemoved, "c1"}, true},
		{"another namespace", "moby", "/tasks/exit", &apievents.TaskExit{ContainerID: "c1", ID: "c1"}, taskEvent{}, false},
		{"an OOM kill makes no event of its own", "k8s.io", "/tasks/oom", &apievents.TaskOOM{ContainerID: "c1"}, taskEvent{}, false},
		{"an event without an ID", "k8s.io", "/tasks/start", &apievents.TaskStart{}, taskEvent{}, false},
		{"the marker", "k8s.io", syncTopic, wrapperspb.String("x"), taskEvent{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := typeurl.MarshalAnyToProto(tt.event)
			if err != nil {
				t.Fatal(err)
			}
			env := &ctrdtypes.Envelope{Namespace: tt.ns, Topic: tt.topic, Event: payload}
			got, ok := taskEventOf(env, "k8s.io")
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	t.Run("a payload that does not decode", func(t *testing.T) {
		env := &ctrdtypes.Envelope{Namespace: "k8s.io", Topic: "/tasks/exit", Event: &anypb.Any{TypeUrl: "containerd.events.TaskExit", Value: []byte{0xff}}}
		if got, ok := taskEventOf(env, "k8s.io"); ok {
			t.Errorf("got %+v; want it ignored", got)
		}
	})
	t.Run("no payload", func(t *testing.T) {
		if got, ok := taskEventOf(&ctrdtypes.Envelope{Namespace: "k8s.io", Topic: "/tasks/exit"}, "k8s.io"); ok {
			t.Errorf("got %+v; want it ignored", got)
		}
	})
}

func TestSubscribeFilters(t *testing.T) {
	got := subscribeFilters("k8s.io")
	if len(got) != len(eventTopics) || got[0] != `namespace=="k8s.io",topic=="/containers/create"` {
		t.Errorf("got %q; want one filter per topic, namespace and topic quoted", got)
	}
}
