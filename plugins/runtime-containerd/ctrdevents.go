package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	apievents "github.com/containerd/containerd/api/events"
	eventsapi "github.com/containerd/containerd/api/services/events/v1"
	ctrdtypes "github.com/containerd/containerd/api/types"
	"github.com/containerd/typeurl/v2"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// containerd's own event service (containerd.services.events.v1.Events on
// its main socket) tells of every task's start and exit as it happens. The
// watcher subscribes to the few topics that change what CRI reports, and
// reads each event as "look at this object again" (watch.go): a
// containerd event comes before CRI has updated its own view, so the
// state the plugin reports is CRI's, with one exception: a container's own
// exit, which the exit event tells all of, is reported from the event
// (exits.go).

// taskTopic is what a containerd event says happened to an object.
type taskTopic int

const (
	// topicCreated: the containerd container of a CRI container or
	// sandbox was made.
	topicCreated taskTopic = iota + 1
	// topicStarted: a task's init process started.
	topicStarted
	// topicExited: a task's init process exited (/tasks/exit) or its task
	// was deleted (/tasks/delete), which also tells of an exit.
	topicExited
	// topicRemoved: the containerd container of a CRI container or
	// sandbox was deleted.
	topicRemoved
	// topicOOM: the kernel's OOM killer killed a process of the task's
	// cgroup (/tasks/oom); CRI then gives the exit the reason OOMKilled.
	topicOOM
)

// taskEvent is one containerd event the watcher acts on: the ID is a CRI
// container's or sandbox's (containerd names a CRI object's container and
// task by its CRI ID).
type taskEvent struct {
	topic taskTopic
	id    string
	// exit is what a /tasks/exit of the init process tells of its end;
	// nil for every other event.
	exit *exitFact
}

// syncTopic carries the plugin's own marker event: a subscription is live
// once the marker it published comes back (containerd does not say when a
// subscriber is registered).
const syncTopic = "/podhost/runtime-containerd/sync"

// The marker is published again after these waits until it comes back.
const (
	markerRetryInitial = 5 * time.Millisecond
	markerRetryMax     = 200 * time.Millisecond
)

// eventTopics are the topics subscribed to. /tasks/oom comes before the
// /tasks/exit of the OOM-killed container, whose exit the plugin reports
// from the event itself (exits.go), with the reason CRI will give it.
var eventTopics = []string{"/containers/create", "/tasks/start", "/tasks/exit", "/tasks/delete", "/containers/delete", "/tasks/oom", syncTopic}

// subscribeFilters are containerd filters for the topics in namespace ns.
func subscribeFilters(ns string) []string {
	out := make([]string, 0, len(eventTopics))
	for _, t := range eventTopics {
		out = append(out, fmt.Sprintf("namespace==%q,topic==%q", ns, t))
	}
	return out
}

// taskEventOf translates one envelope of namespace ns. It reports false for
// what the watcher ignores: another namespace, an exec process (a probe's
// ExecSync starts and ends one), a topic or payload it does not know.
func taskEventOf(env *ctrdtypes.Envelope, ns string) (taskEvent, bool) {
	if env.GetNamespace() != ns || env.GetEvent() == nil {
		return taskEvent{}, false
	}
	v, err := typeurl.UnmarshalAny(env.GetEvent())
	if err != nil {
		return taskEvent{}, false
	}
	switch e := v.(type) {
	case *apievents.TaskStart:
		return taskEventIf(topicStarted, e.GetContainerID(), "")
	case *apievents.TaskExit:
		ev, ok := taskEventIf(topicExited, e.GetContainerID(), e.GetID())
		if ok && e.GetExitedAt() != nil {
			ev.exit = &exitFact{code: int32(e.GetExitStatus()), at: e.GetExitedAt().AsTime().UnixNano()}
		}
		return ev, ok
	case *apievents.TaskOOM:
		return taskEventIf(topicOOM, e.GetContainerID(), "")
	case *apievents.TaskDelete:
		return taskEventIf(topicExited, e.GetContainerID(), e.GetID())
	case *apievents.ContainerCreate:
		return taskEventIf(topicCreated, e.GetID(), "")
	case *apievents.ContainerDelete:
		return taskEventIf(topicRemoved, e.GetID(), "")
	}
	return taskEvent{}, false
}

// taskEventIf is the event of the object id, unless it is empty or the
// process is an exec's (an init process's ID is its container's, or empty).
func taskEventIf(topic taskTopic, id, process string) (taskEvent, bool) {
	if id == "" || (process != "" && process != id) {
		return taskEvent{}, false
	}
	return taskEvent{topic: topic, id: id}, true
}

// taskEvents is one live subscription.
type taskEvents interface {
	// next blocks for the next event the watcher acts on; an error ends the
	// subscription.
	next() (taskEvent, error)
}

// ctrdSubscription is a subscription to containerd's event service.
type ctrdSubscription struct {
	stream  eventsapi.Events_SubscribeClient
	ns      string
	pending []taskEvent // events that came in before the marker
}

// subscribeContainerd subscribes to the task events of namespace ns and
// returns once the subscription is live: it publishes a marker event of its
// own and waits for it, keeping what comes before it. ctx bounds the
// subscription's whole life; barrier bounds the wait for the marker.
func subscribeContainerd(ctx, barrier context.Context, client eventsapi.EventsClient, ns string) (*ctrdSubscription, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, "containerd-namespace", ns)
	stream, err := client.Subscribe(ctx, &eventsapi.SubscribeRequest{Filters: subscribeFilters(ns)})
	if err != nil {
		return nil, criError("subscribe to containerd events", err)
	}
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	marker, err := anypb.New(wrapperspb.String(hex.EncodeToString(nonce)))
	if err != nil {
		return nil, fmt.Errorf("%w: marker event: %w", errBackend, err)
	}
	pubCtx := metadata.AppendToOutgoingContext(barrier, "containerd-namespace", ns)
	s := &ctrdSubscription{stream: stream, ns: ns}
	got := make(chan error, 1)
	go func() {
		for {
			env, err := stream.Recv()
			if err != nil {
				got <- criError("wait for the marker event", err)
				return
			}
			if env.GetTopic() == syncTopic && env.GetNamespace() == ns && sameMarker(env.GetEvent(), marker) {
				got <- nil
				return
			}
			if ev, ok := taskEventOf(env, ns); ok {
				s.pending = append(s.pending, ev)
			}
		}
	}()
	// A marker published before containerd has registered the subscriber
	// is not delivered to it: publish again until one comes back.
	for wait := markerRetryInitial; ; wait = min(2*wait, markerRetryMax) {
		if _, err := client.Publish(pubCtx, &eventsapi.PublishRequest{Topic: syncTopic, Event: marker}); err != nil {
			return nil, criError("publish the marker event", err)
		}
		select {
		case err := <-got:
			if err != nil {
				return nil, err
			}
			return s, nil
		case <-time.After(wait):
		case <-barrier.Done():
			// The caller cancels ctx, which ends the goroutine's Recv.
			return nil, fmt.Errorf("%w: the marker event did not come back: %w", errDeadline, barrier.Err())
		}
	}
}

// sameMarker compares two marker payloads.
func sameMarker(a, b *anypb.Any) bool {
	return a.GetTypeUrl() == b.GetTypeUrl() && string(a.GetValue()) == string(b.GetValue())
}

func (s *ctrdSubscription) next() (taskEvent, error) {
	if len(s.pending) > 0 {
		ev := s.pending[0]
		s.pending = s.pending[1:]
		return ev, nil
	}
	for {
		env, err := s.stream.Recv()
		if err != nil {
			return taskEvent{}, criError("containerd events", err)
		}
		if ev, ok := taskEventOf(env, s.ns); ok {
			return ev, nil
		}
	}
}
