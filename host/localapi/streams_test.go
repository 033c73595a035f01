package localapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/util/exec"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/streamproxy/streamproxytest"
	"github.com/podhost/podhost/internal/testutil"
)

// streamClients serves the fixture with streams to rt's CRI streaming
// server on a unix socket and on TCP with a token, and returns a client
// of each; the servers stop, and no goroutine may be left, when t ends.
func streamClients(t *testing.T, rt *streamproxytest.EchoRuntime) map[string]*localapi.Client {
	t.Helper()
	// Registered first, so run last: after the servers stopped.
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	_, _, views := fixture(t)
	views.Streams = streamproxytest.Start(t, rt)
	unix, err := localapi.Listen(filepath.Join(t.TempDir(), "host.sock"), views)
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := localapi.ListenTCP("127.0.0.1:0", writeToken(t, 0o600, "s3cret"), views)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*localapi.Server{unix, tcp} {
		go s.Serve()
		t.Cleanup(func() { s.Shutdown(context.WithoutCancel(t.Context())) })
	}
	tc, err := localapi.NewTCPClient(tcp.Addr().String(), "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*localapi.Client{"unix socket (spdy)": localapi.NewClient(unix.Addr().String()), "tcp (websocket)": tc}
}

// TestExecThroughTheAPI runs a command through the local API to a CRI
// streaming server with the client's executors: stdin reaches it, stdout
// and stderr come back apart, and so does the exit code; the container
// defaults to the pod's first.
func TestExecThroughTheAPI(t *testing.T) {
	for name, c := range streamClients(t, &streamproxytest.EchoRuntime{}) {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := c.Exec(t.Context(), "default", "web", []string{"cat"}, localapi.StreamOptions{Stdin: strings.NewReader("in\n"), Stdout: &stdout, Stderr: &stderr})
			var code exec.ExitError
			if !errors.As(err, &code) || code.ExitStatus() != 3 || stdout.String() != "in\n" || stderr.String() != "err\n" {
				t.Fatalf("stdout %q stderr %q, %v; want \"in\\n\" \"err\\n\" and exit code 3", stdout.String(), stderr.String(), err)
			}
			err = c.Exec(t.Context(), "default", "nope", []string{"true"}, localapi.StreamOptions{Stdout: io.Discard})
			if err == nil || !strings.Contains(err.Error(), "default/nope") {
				t.Fatalf("exec in a missing pod: %v; want an error naming default/nope", err)
			}
		})
	}
}

// TestDroppedExecEndsInTheRuntime drops the client's side of a running
// exec: the runtime's command sees its stream end (its next write
// fails), and no goroutine stays (streamClients checks).
func TestDroppedExecEndsInTheRuntime(t *testing.T) {
	rt := &streamproxytest.EchoRuntime{Started: make(chan struct{}, 1)}
	clients := streamClients(t, rt)
	want := 0
	for name, c := range clients {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				done <- c.Exec(ctx, "default", "web", []string{"ticker"}, localapi.StreamOptions{Stdout: io.Discard})
			}()
			<-rt.Started
			cancel()
			if err := <-done; err == nil {
				t.Error("a dropped exec returned no error")
			}
			want++
			// The runtime ends the exec once it sees the stream gone; a
			// deadline rather than a hang if it never does.
			deadline := time.Now().Add(30 * time.Second)
			for rt.Ended() < want {
				if time.Now().After(deadline) {
					t.Fatalf("the runtime ended %d execs of %d after the clients dropped them", rt.Ended(), want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// TestPortForwardThroughTheAPI forwards connections through the local API
// to a CRI streaming server with the client's port forwarder.
func TestPortForwardThroughTheAPI(t *testing.T) {
	for name, c := range streamClients(t, &streamproxytest.EchoRuntime{}) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			ready := make(chan struct{})
			var out testutil.SyncBuffer
			done := make(chan error, 1)
			go func() {
				done <- c.PortForward(ctx, "default", "web", []string{"127.0.0.1"}, []string{"0:80"}, ready, &out, io.Discard)
			}()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("PortForward: %v", err)
				}
			}()
			select {
			case <-ready:
			case err := <-done:
				done <- err
				t.Fatalf("PortForward ended before it was ready: %v", err)
			}
			var port int
			if _, err := fmt.Sscanf(out.String(), "Forwarding from 127.0.0.1:%d -> 80", &port); err != nil {
				t.Fatalf("PortForward printed %q: %v", out.String(), err)
			}
			conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(conn, "hello")
			conn.(*net.TCPConn).CloseWrite()
			got, err := io.ReadAll(conn)
			conn.Close()
			if err != nil || string(got) != "HELLO" {
				t.Fatalf("the forwarded connection answered %q (%v); want HELLO", got, err)
			}
		})
	}
}
