package runtimemanager

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestStreamURLs checks which container or sandbox a stream is asked for:
// the fake runtime serves no streaming, so a call that reaches it is
// ErrNoStreaming, and one refused before it names what is missing.
func TestStreamURLs(t *testing.T) {
	e := newEnv(t)
	pod := newPod("p", "app", "side")
	e.mustSync(pod)
	ctx := context.Background()
	if err := e.m.KillContainer(ctx, pod, "side", e.container(pod, "side").ID, 0, "test"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"exec in a running container", func() error {
			_, err := e.m.ExecURL(ctx, pod.UID, "app", []string{"sh"}, Streams{Stdout: true})
			return err
		}, ErrNoStreaming},
		{"exec in a stopped container", func() error {
			_, err := e.m.ExecURL(ctx, pod.UID, "side", []string{"sh"}, Streams{Stdout: true})
			return err
		}, ErrRejected},
		{"exec in a container the pod does not have", func() error {
			_, err := e.m.ExecURL(ctx, pod.UID, "nope", []string{"sh"}, Streams{Stdout: true})
			return err
		}, ErrNotFound},
		{"attach to a running container", func() error {
			_, err := e.m.AttachURL(ctx, pod.UID, "app", Streams{Stdout: true})
			return err
		}, ErrNoStreaming},
		{"port-forward to a ready sandbox", func() error {
			_, err := e.m.PortForwardURL(ctx, pod.UID, nil)
			return err
		}, ErrNoStreaming},
		{"port-forward to a pod the runtime does not hold", func() error {
			_, err := e.m.PortForwardURL(ctx, types.UID("no-such-uid"), nil)
			return err
		}, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, tt.want) {
				t.Fatalf("got %v; want %v", err, tt.want)
			}
		})
	}
}
