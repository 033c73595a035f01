package main

import (
	"reflect"
	"testing"
	"time"

	apievents "github.com/containerd/containerd/api/events"
	ctrdtypes "github.com/containerd/containerd/api/types"
	"github.com/containerd/typeurl/v2"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
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
		{"a task starts", "k8s.io", "/tasks/start", &apievents.TaskStart{ContainerID: "c1", Pid: 10}, taskEvent{topic: topicStarted, id: "c1"}, true},
		{"an init process exits", "k8s.io", "/tasks/exit", &apievents.TaskExit{ContainerID: "c1", ID: "c1", ExitStatus: 3}, taskEvent{topic: topicExited, id: "c1"}, true},
		{"an init process exits, with its time", "k8s.io", "/tasks/exit", &apievents.TaskExit{ContainerID: "c1", ID: "c1", ExitStatus: 137, ExitedAt: timestamppb.New(time.Unix(5, 6))},
			taskEvent{topic: topicExited, id: "c1", exit: &exitFact{code: 137, at: 5_000_000_006}}, true},
		{"an exec process exits", "k8s.io", "/tasks/exit", &apievents.TaskExit{ContainerID: "c1", ID: "exec-1"}, taskEvent{}, false},
		{"a task is deleted", "k8s.io", "/tasks/delete", &apievents.TaskDelete{ContainerID: "c1", ID: "c1"}, taskEvent{topic: topicExited, id: "c1"}, true},
		{"a task is deleted, no process ID", "k8s.io", "/tasks/delete", &apievents.TaskDelete{ContainerID: "c1"}, taskEvent{topic: topicExited, id: "c1"}, true},
		{"an exec process is deleted", "k8s.io", "/tasks/delete", &apievents.TaskDelete{ContainerID: "c1", ID: "exec-1"}, taskEvent{}, false},
		{"a container is made", "k8s.io", "/containers/create", &apievents.ContainerCreate{ID: "c1", Image: "busybox"}, taskEvent{topic: topicCreated, id: "c1"}, true},
		{"a container is deleted", "k8s.io", "/containers/delete", &apievents.ContainerDelete{ID: "c1"}, taskEvent{topic: topicRemoved, id: "c1"}, true},
		{"another namespace", "moby", "/tasks/exit", &apievents.TaskExit{ContainerID: "c1", ID: "c1"}, taskEvent{}, false},
		{"an OOM kill", "k8s.io", "/tasks/oom", &apievents.TaskOOM{ContainerID: "c1"}, taskEvent{topic: topicOOM, id: "c1"}, true},
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
			if !reflect.DeepEqual(got, tt.want) || ok != tt.wantOK {
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
