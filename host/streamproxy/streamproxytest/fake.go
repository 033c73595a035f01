// Package streamproxytest serves a CRI streaming server (k8s.io/cri-streaming,
// the library containerd's is built on) over a runtime of fixed answers,
// and a streamproxy.Streams that finds its URLs: the far end of the
// streams that host/nodeserver's and host/localapi's tests proxy to. Only
// those tests import it.
package streamproxytest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/exec"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/podhost/podhost/host/streamproxy"
)

// EchoRuntime is a CRI streaming runtime. Every command copies stdin to
// stdout, writes "err" to stderr and exits 3, except "ticker", which
// writes a line to stdout every 10 ms until a write fails (its stream
// ended, as a process would get EPIPE) and then counts itself Ended.
// Attach is refused.
// PortForward answers each connection with what it sent, upper-cased,
// once the client closed its side.
type EchoRuntime struct {
	mu    sync.Mutex
	ended int
	// Started receives a value when a "ticker" command starts; nil: none.
	Started chan struct{}
}

// Ended is how many "ticker" commands have ended.
func (e *EchoRuntime) Ended() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ended
}

func (e *EchoRuntime) Exec(ctx context.Context, _ string, cmd []string, in io.Reader, out, errw io.WriteCloser, _ bool, _ <-chan remotecommand.TerminalSize) error {
	if len(cmd) == 1 && cmd[0] == "ticker" {
		if e.Started != nil {
			e.Started <- struct{}{}
		}
		defer func() {
			e.mu.Lock()
			e.ended++
			e.mu.Unlock()
		}()
		for {
			if _, err := io.WriteString(out, "tick\n"); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	if in != nil {
		if _, err := io.Copy(out, in); err != nil {
			return err
		}
	}
	if errw != nil {
		io.WriteString(errw, "err\n")
	}
	return exec.CodeExitError{Err: errors.New("exit 3"), Code: 3}
}

func (*EchoRuntime) Attach(context.Context, string, io.Reader, io.WriteCloser, io.WriteCloser, bool, <-chan remotecommand.TerminalSize) error {
	return errors.New("no attach here")
}

func (*EchoRuntime) PortForward(_ context.Context, _ string, _ int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	b, err := io.ReadAll(stream)
	if err != nil {
		return err
	}
	_, err = stream.Write(bytes.ToUpper(b))
	return err
}

// Start serves rt on a CRI streaming server until the test ends and
// returns the Streams that find its URLs: the container is the
// container's ID, the pod the sandbox's.
func Start(t *testing.T, rt streaming.Runtime) streamproxy.Streams {
	t.Helper()
	cfg := streaming.DefaultConfig
	cfg.Addr = "127.0.0.1:0"
	hs := httptest.NewUnstartedServer(nil)
	cfg.BaseURL = &url.URL{Scheme: "http", Host: hs.Listener.Addr().String()}
	srv, err := streaming.NewServer(cfg, rt)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv
	hs.Start()
	t.Cleanup(hs.Close)
	return criStreams{srv}
}

// criStreams answers with the URLs of a CRI streaming server.
type criStreams struct{ srv streaming.Server }

func (c criStreams) Exec(_ context.Context, _, _ string, _ types.UID, container string, cmd []string, o streamproxy.Options) (*url.URL, error) {
	resp, err := c.srv.GetExec(&runtimeapi.ExecRequest{ContainerId: container, Cmd: cmd, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Tty: o.TTY})
	if err != nil {
		return nil, err
	}
	return url.Parse(resp.Url)
}

func (criStreams) Attach(context.Context, string, string, types.UID, string, streamproxy.Options) (*url.URL, error) {
	return nil, errors.New("no attach here")
}

func (c criStreams) PortForward(_ context.Context, _, pod string, _ types.UID, ports []int32) (*url.URL, error) {
	resp, err := c.srv.GetPortForward(&runtimeapi.PortForwardRequest{PodSandboxId: pod, Port: ports})
	if err != nil {
		return nil, err
	}
	return url.Parse(resp.Url)
}
