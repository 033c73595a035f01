package supervisor

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
	"github.com/podhost/podhost/sdk"
)

// BenchmarkUnaryCall measures one Identity.GetInfo call from the host to a
// plugin: through the Manager over go-plugin gRPC with and without AutoMTLS,
// and, as the baseline, over a plain gRPC connection to a server in this
// process on a unix socket. Besides ns/op it reports the p50 and p99 of the
// per-call latencies.
func BenchmarkUnaryCall(b *testing.B) {
	b.Run("go-plugin-automtls", func(b *testing.B) { benchManager(b, Options{}) })
	b.Run("go-plugin-plaintext", func(b *testing.B) { benchManager(b, Options{DisableAutoMTLS: true}) })
	b.Run("in-process-unix", func(b *testing.B) { benchInProcess(b, false) })
	b.Run("in-process-unix-guarded", func(b *testing.B) { benchInProcess(b, true) })
	b.Run("other-process-unix", benchOtherProcess)
}

func benchManager(b *testing.B, opts Options) {
	h := newTestHost(b, opts)
	if err := h.Start(b.Context(), []PluginSpec{testSpec(b, "bench", behaveOK)}); err != nil {
		b.Fatal(err)
	}
	id, err := h.Identity("bench")
	if err != nil {
		b.Fatal(err)
	}
	benchGetInfo(b, id)
}

// benchInProcess calls a gRPC server in this process; guarded puts the
// supervisor's callGuard interceptors on the connection, to measure them.
func benchInProcess(b *testing.B, guarded bool) {
	srv := grpc.NewServer()
	if err := sdk.Register(srv, testPlugin(behaveOK, nil)); err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(b.TempDir(), "bench.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	b.Cleanup(func() {
		srv.Stop()
		<-served
	})
	dialOpts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if guarded {
		died, markDied := context.WithCancel(b.Context())
		b.Cleanup(markDied)
		dialOpts = append(dialOpts, (&callGuard{plugin: "bench", died: died, grace: time.Second}).dialOptions()...)
	}
	conn, err := grpc.NewClient("unix://"+sock, dialOpts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	benchGetInfo(b, pluginv1.NewIdentityClient(conn))
}

func benchGetInfo(b *testing.B, id pluginv1.IdentityClient) {
	ctx := b.Context()
	req := &pluginv1.GetInfoRequest{}
	// Warm the connection up (handshakes, first stream).
	for range 100 {
		if _, err := id.GetInfo(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := id.GetInfo(ctx, req); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)*50/100]), "p50-ns")
	b.ReportMetric(float64(durs[len(durs)*99/100]), "p99-ns")
}

// benchOtherProcess calls a plain gRPC server in a child process, without
// go-plugin: the cost of crossing the process boundary alone.
func benchOtherProcess(b *testing.B) {
	sock := filepath.Join(b.TempDir(), "raw.sock")
	cmd := exec.Command(testExecutable(b), pluginArg, behaveRawGRPC, sock)
	cmd.Env = append(os.Environ(), pluginapi.Handshake.MagicCookieKey+"="+pluginapi.Handshake.MagicCookieValue)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	id := pluginv1.NewIdentityClient(conn)
	waitFor(b, 10*time.Second, "the raw gRPC server", func() bool {
		_, err := id.GetInfo(b.Context(), &pluginv1.GetInfoRequest{})
		return err == nil
	})
	benchGetInfo(b, id)
}
