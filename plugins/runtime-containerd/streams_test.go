package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/test/crisetup"
)

// TestStreamsWithContainerd asks for exec, attach and port-forward URLs
// through the contract against a private containerd, runs a command at the
// exec URL with client-go's SPDY executor (stdin in, stdout and stderr
// apart, the exit code back), and checks the codes of calls that must
// fail.
func TestStreamsWithContainerd(t *testing.T) {
	c := crisetup.StartForTest(t)
	rt := connect(t, fmt.Sprintf(`{"endpoint":%q,"timeouts":{"runtime":"60s","image":"60s"}}`, c.Endpoint()))
	logs := t.TempDir()
	sb, sbCfg := runSandbox(t, rt, "streams", func(sb *runtimev1.SandboxConfig) {
		sb.HostNetwork = true
		sb.LogDirectory = filepath.Join(logs, sb.GetMetadata().GetUid())
	})
	id := createAndStart(t, rt, sb, sbCfg, "sleeper", "sh", "-c", `trap "exit 0" TERM; while true; do sleep 0.1; done`)

	resp, err := rt.Exec(callCtx(t), &runtimev1.ExecRequest{ContainerId: id,
		Cmd: []string{"sh", "-c", "cat; echo err >&2; exit 3"}, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	u, err := url.Parse(resp.GetUrl())
	if err != nil {
		t.Fatalf("Exec answered %q: %v", resp.GetUrl(), err)
	}
	ex, err := remotecommand.NewSPDYExecutor(&rest.Config{}, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = ex.StreamWithContext(callCtx(t), remotecommand.StreamOptions{Stdin: strings.NewReader("in\n"), Stdout: &stdout, Stderr: &stderr})
	var code exec.CodeExitError
	if !errors.As(err, &code) || code.Code != 3 || stdout.String() != "in\n" || stderr.String() != "err\n" {
		t.Fatalf("exec at %s: stdout %q stderr %q, %v; want \"in\\n\" \"err\\n\" and exit code 3", u, stdout.String(), stderr.String(), err)
	}

	if r, err := rt.Attach(callCtx(t), &runtimev1.AttachRequest{ContainerId: id, Stdout: true, Stderr: true}); err != nil || !strings.HasPrefix(r.GetUrl(), "http") {
		t.Errorf("Attach: %q, %v; want a URL", r.GetUrl(), err)
	}
	if r, err := rt.PortForward(callCtx(t), &runtimev1.PortForwardRequest{SandboxId: sb, Ports: []int32{80}}); err != nil || !strings.HasPrefix(r.GetUrl(), "http") {
		t.Errorf("PortForward: %q, %v; want a URL", r.GetUrl(), err)
	}

	if _, err := rt.StopContainer(callCtx(t), &runtimev1.StopContainerRequest{ContainerId: id, TimeoutSeconds: 10}); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	const unknown = "0123456789abcdef0123456789abcdef"
	tests := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"exec: exited container", func() error {
			_, err := rt.Exec(callCtx(t), &runtimev1.ExecRequest{ContainerId: id, Cmd: []string{"true"}, Stdout: true})
			return err
		}, codes.FailedPrecondition},
		{"exec: unknown container", func() error {
			_, err := rt.Exec(callCtx(t), &runtimev1.ExecRequest{ContainerId: unknown, Cmd: []string{"true"}, Stdout: true})
			return err
		}, codes.NotFound},
		{"exec: no command", func() error {
			_, err := rt.Exec(callCtx(t), &runtimev1.ExecRequest{ContainerId: id, Stdout: true})
			return err
		}, codes.InvalidArgument},
		{"exec: no stream", func() error {
			_, err := rt.Exec(callCtx(t), &runtimev1.ExecRequest{ContainerId: id, Cmd: []string{"true"}})
			return err
		}, codes.InvalidArgument},
		{"exec: tty and stderr", func() error {
			_, err := rt.Exec(callCtx(t), &runtimev1.ExecRequest{ContainerId: id, Cmd: []string{"true"}, Tty: true, Stderr: true})
			return err
		}, codes.InvalidArgument},
		{"attach: unknown container", func() error {
			_, err := rt.Attach(callCtx(t), &runtimev1.AttachRequest{ContainerId: unknown, Stdout: true})
			return err
		}, codes.NotFound},
		{"port-forward: unknown sandbox", func() error {
			_, err := rt.PortForward(callCtx(t), &runtimev1.PortForwardRequest{SandboxId: unknown})
			return err
		}, codes.NotFound},
		{"port-forward: bad port", func() error {
			_, err := rt.PortForward(callCtx(t), &runtimev1.PortForwardRequest{SandboxId: sb, Ports: []int32{70000}})
			return err
		}, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := status.Code(tt.call()); got != tt.want {
				t.Fatalf("got %v (%v); want %v", got, tt.call(), tt.want)
			}
		})
	}
}
