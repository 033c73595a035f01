package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func fixedClock() func() time.Time {
	t := time.Unix(1700000000, 0)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func TestContainerTransitions(t *testing.T) {
	tests := []struct {
		name      string
		calls     []string // start, stop, kill, remove, stop-sandbox
		wantErr   error    // of the last call
		wantState ContainerState
		wantExit  int32
	}{
		{name: "created", wantState: ContainerCreated},
		{name: "started", calls: []string{"start"}, wantState: ContainerRunning},
		{name: "started twice", calls: []string{"start", "start"}, wantState: ContainerRunning},
		{name: "stopped gracefully", calls: []string{"start", "stop"}, wantState: ContainerExited},
		{name: "killed", calls: []string{"start", "kill"}, wantState: ContainerExited, wantExit: 137},
		{name: "stopped twice keeps the first exit", calls: []string{"start", "kill", "stop"}, wantState: ContainerExited, wantExit: 137},
		{name: "restart refused", calls: []string{"start", "stop", "start"}, wantErr: errPrecondition, wantState: ContainerExited},
		{name: "sandbox stopped", calls: []string{"start", "stop-sandbox"}, wantState: ContainerExited, wantExit: 137},
		{name: "start in stopped sandbox", calls: []string{"stop-sandbox", "start"}, wantErr: errPrecondition, wantState: ContainerExited, wantExit: 137},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m := newMemory(fixedClock())
			m.configure([]string{"img"}, true)
			sb, err := m.RunSandbox(ctx, Sandbox{Name: "p", UID: "u"})
			if err != nil {
				t.Fatal(err)
			}
			id, err := m.CreateContainer(ctx, Container{SandboxID: sb, Name: "c", Image: "img"})
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range tt.calls {
				switch call {
				case "start":
					err = m.StartContainer(ctx, id)
				case "stop":
					err = m.StopContainer(ctx, id, time.Second)
				case "kill":
					err = m.StopContainer(ctx, id, 0)
				case "stop-sandbox":
					err = m.StopSandbox(ctx, sb)
				}
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("last call: got %v; want %v", err, tt.wantErr)
			}
			c, err := m.ContainerStatus(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if c.State != tt.wantState || c.ExitCode != tt.wantExit {
				t.Errorf("got state %v exit %d; want %v exit %d", c.State, c.ExitCode, tt.wantState, tt.wantExit)
			}
		})
	}
}

func TestFilterMatches(t *testing.T) {
	labels := map[string]string{"pod": "a", "ns": "x"}
	tests := []struct {
		name string
		f    Filter
		want bool
	}{
		{"empty", Filter{}, true},
		{"id", Filter{ID: "c1"}, true},
		{"other id", Filter{ID: "c2"}, false},
		{"sandbox", Filter{SandboxID: "s1"}, true},
		{"other sandbox", Filter{SandboxID: "s2"}, false},
		{"state", Filter{State: int(ContainerRunning)}, true},
		{"other state", Filter{State: int(ContainerExited)}, false},
		{"subset of labels", Filter{Labels: map[string]string{"pod": "a"}}, true},
		{"other value", Filter{Labels: map[string]string{"pod": "b"}}, false},
		{"missing label", Filter{Labels: map[string]string{"zone": ""}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.matches("c1", "s1", int(ContainerRunning), labels); got != tt.want {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

func TestEnsureImage(t *testing.T) {
	tests := []struct {
		name       string
		offline    bool
		image      string
		policy     PullPolicy
		wantPulled bool
		wantErr    error
	}{
		{name: "present", image: "preloaded", policy: PullIfNotPresent},
		{name: "present, always", image: "preloaded", policy: PullAlways, wantPulled: true},
		{name: "present, never", image: "preloaded", policy: PullNever},
		{name: "absent", image: "docker.io/library/busybox", policy: PullIfNotPresent, wantPulled: true},
		{name: "absent, never", image: "docker.io/library/busybox", policy: PullNever, wantErr: errNotFound},
		{name: "absent, offline", offline: true, image: "docker.io/library/busybox", policy: PullIfNotPresent, wantErr: errNotFound},
		{name: "reserved registry", image: "registry.invalid/x:1", policy: PullAlways, wantErr: errNotFound},
		{name: "empty", image: "", wantErr: errInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemory(fixedClock())
			m.configure([]string{"preloaded"}, tt.offline)
			ref, pulled, err := m.EnsureImage(context.Background(), tt.image, tt.policy)
			if !errors.Is(err, tt.wantErr) || pulled != tt.wantPulled {
				t.Fatalf("got pulled=%v err=%v; want pulled=%v err=%v", pulled, err, tt.wantPulled, tt.wantErr)
			}
			if err == nil && ref != referenceOf(tt.image) {
				t.Errorf("got ref %q; want %q", ref, referenceOf(tt.image))
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   []string
	}{
		{name: "empty", config: `{}`},
		{name: "images", config: `{"images":["a","b"],"offline":true}`},
		{name: "empty image", config: `{"images":["a",""]}`, want: []string{"images[1]: must not be empty"}},
		{name: "duplicate image", config: `{"images":["a","a"]}`, want: []string{`images[1]: "a" is already images[0]`}},
		{name: "wrong type", config: `{"offline":"yes"}`, want: []string{"offline: want a boolean, got string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := parseConfig([]byte(tt.config))
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestHubDropsForSlowSubscribers(t *testing.T) {
	var h hub
	events, cancel := h.Subscribe()
	defer cancel()
	for range subscriberBuffer + 10 {
		h.publish(Event{Type: EventContainerCreated})
	}
	if got := len(events); got != subscriberBuffer {
		t.Errorf("buffered events: got %d; want %d", got, subscriberBuffer)
	}
}
