package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

// instance is one launched plugin process and its connection. A go-plugin
// Client is single use, so every launch makes a new instance.
type instance struct {
	client *plugin.Client
	conn   *pluginapi.Conn
	// died is cancelled when the process exited or was killed.
	died     context.Context
	markDied context.CancelFunc
	cmd      *exec.Cmd
	pid      int
	socket   string // the unix socket the plugin listens on, if any
	pidFile  string // where its PID is recorded, if anywhere
	started  time.Time
}

// kill stops the process (go-plugin asks it to shut down, then SIGKILLs
// it after 2 s) and waits for go-plugin's goroutines to end.
func (i *instance) kill() {
	i.client.Kill()
	i.markDied()
	if i.socket != "" {
		// A killed plugin leaves its socket behind.
		_ = os.Remove(i.socket)
	}
	if i.pidFile != "" {
		_ = os.Remove(i.pidFile)
	}
}

// exitStatus describes how the process ended ("exit status 3", "signal:
// killed"); it is only meaningful after kill, which waits for the process.
func (i *instance) exitStatus() string {
	if i.cmd.ProcessState == nil {
		return ""
	}
	return i.cmd.ProcessState.String()
}

// exited reports whether the process is known to have exited.
func (i *instance) exited() bool { return i.died.Err() != nil || i.client.Exited() }

// launcher starts instances of one plugin and runs the start checks.
type launcher struct {
	spec PluginSpec
	opts *Options
}

// launch starts the plugin and checks it: checksum, go-plugin handshake,
// GetInfo (kind and contract version), Configure and Probe. On success the
// instance runs and the returned inStarted describes it; on failure nothing
// is left running and the error is a *RefusedError when a check refused the
// plugin.
func (l *launcher) launch(ctx context.Context) (*instance, inStarted, error) {
	name := l.spec.Name
	secure, err := l.checkChecksum()
	if err != nil {
		return nil, inStarted{}, err
	}

	// died outlives the launch ctx: it is the instance's life.
	died, markDied := context.WithCancel(context.WithoutCancel(ctx))
	guard := &callGuard{plugin: name, died: died, grace: l.opts.ExitGrace}

	reapStale(l.opts.SocketDir, name, l.spec.Path, l.opts.Logger.Named(name))
	cmd := exec.Command(l.spec.Path, l.spec.Args...)
	cmd.Env = pluginEnv(os.Environ(), l.opts.SocketDir)
	isolate(cmd)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginapi.Handshake,
		VersionedPlugins: pluginapi.PluginSets(l.spec.Kind, nil),
		Cmd:              cmd,
		SkipHostEnv:      true,
		SecureConfig:     secure,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         !l.opts.DisableAutoMTLS,
		Logger:           l.opts.Logger.Named(name),
		StartTimeout:     l.opts.StartTimeout,
		Stderr:           io.Discard,
		GRPCDialOptions:  guard.dialOptions(),
	})
	inst := &instance{client: client, cmd: cmd, died: died, markDied: markDied, started: l.opts.Now()}
	fail := func(err error) (*instance, inStarted, error) {
		inst.kill()
		if st := inst.exitStatus(); st != "" && !errors.Is(err, ErrPluginRefused) {
			err = fmt.Errorf("%w (%s)", err, st)
		}
		return nil, inStarted{}, err
	}

	if err := startOnOwnThread(client.Start, died.Done()); err != nil {
		return fail(l.startError(err))
	}
	rpc, err := client.Client()
	if err != nil {
		return fail(l.startError(err))
	}
	raw, err := rpc.Dispense(string(l.spec.Kind))
	if err != nil {
		return fail(fmt.Errorf("launch plugin %q: dispense: %w", name, err))
	}
	conn, ok := raw.(*pluginapi.Conn)
	if !ok {
		return fail(fmt.Errorf("launch plugin %q: dispensed %T, want *pluginapi.Conn", name, raw))
	}
	inst.conn = conn
	context.AfterFunc(conn.Done, markDied)
	if rc := client.ReattachConfig(); rc != nil {
		inst.pid = rc.Pid
		if rc.Addr != nil && rc.Addr.Network() == "unix" && l.opts.SocketDir != "" &&
			filepath.Dir(rc.Addr.String()) == filepath.Clean(l.opts.SocketDir) {
			inst.socket = rc.Addr.String()
		}
	}

	started, err := l.check(ctx, pluginv1.NewIdentityClient(conn))
	if err != nil {
		return fail(err)
	}
	started.pid = inst.pid
	if err := recordPID(l.opts.SocketDir, name, inst.pid); err != nil {
		l.opts.Logger.Named(name).Warn("recording the plugin's pid; a host killed now would leave it running", "plugin", name, "err", err)
	} else if l.opts.SocketDir != "" {
		inst.pidFile = pidFile(l.opts.SocketDir, name)
	}
	return inst, started, nil
}

// startOnOwnThread runs start, which forks the plugin process, on an OS
// thread of its own, and keeps that thread locked and idle until done (the
// process exited or was killed). The plugin's parent-death signal (see
// isolate) follows the thread that forked it, not the host process, and Go
// ends a thread whenever a goroutine locked to it returns without
// unlocking: on a shared thread, any such goroutine would kill the plugin.
func startOnOwnThread(start func() (net.Addr, error), done <-chan struct{}) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		_, err := start()
		errc <- err
		if err == nil {
			<-done
		}
	}()
	return <-errc
}

// checkChecksum verifies the executable against spec.SHA256, so that a
// mismatch names both sums, and returns the go-plugin SecureConfig that
// checks it again right before exec.
func (l *launcher) checkChecksum() (*plugin.SecureConfig, error) {
	if l.spec.SHA256 == "" {
		return nil, nil
	}
	want, err := hex.DecodeString(l.spec.SHA256)
	if err != nil {
		return nil, refused(l.spec.Name, err, "has an invalid sha256 pin %q", l.spec.SHA256)
	}
	got, err := fileSHA256(l.spec.Path)
	if err != nil {
		return nil, fmt.Errorf("launch plugin %q: %w", l.spec.Name, err)
	}
	if got != strings.ToLower(l.spec.SHA256) {
		return nil, l.checksumMismatch(got)
	}
	return &plugin.SecureConfig{Checksum: want, Hash: sha256.New()}, nil
}

func (l *launcher) checksumMismatch(actual string) error {
	return refused(l.spec.Name, plugin.ErrChecksumsDoNotMatch,
		"checksum does not match: expected sha256 %s, actual %s (%s)", strings.ToLower(l.spec.SHA256), actual, l.spec.Path)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("checksum: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checksum %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// startError classifies an error of go-plugin's Start: a checksum or
// protocol mismatch refuses the plugin, anything else (exec failure, exit
// before the handshake, timeout) is a failed start.
func (l *launcher) startError(err error) error {
	msg := strings.ToLower(err.Error())
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		actual, sumErr := fileSHA256(l.spec.Path)
		if sumErr != nil {
			actual = sumErr.Error()
		}
		return l.checksumMismatch(actual)
	case strings.Contains(msg, "incompatible api version"), strings.Contains(msg, "incompatible core api version"):
		return refused(l.spec.Name, err, "speaks an incompatible go-plugin protocol, host speaks protocol version %d: %v",
			pluginapi.ProtocolVersion, err)
	case strings.Contains(msg, "unsupported plugin protocol"):
		return refused(l.spec.Name, err, "does not serve gRPC: %v", err)
	}
	// go-plugin's errors may carry a multi-line diagnosis; log it whole and
	// keep the first line for the status.
	first, _, multiline := strings.Cut(err.Error(), "\n")
	if !multiline {
		return fmt.Errorf("launch plugin %q: %w", l.spec.Name, err)
	}
	l.opts.Logger.Named(l.spec.Name).Debug("plugin launch failed", "plugin", l.spec.Name, "err", err)
	if strings.TrimSpace(strings.TrimPrefix(strings.ToLower(first), "unrecognized remote plugin message:")) == "" {
		first = "no go-plugin handshake on stdout (the process exited, or is not a podhost plugin)"
	}
	return fmt.Errorf("launch plugin %q: %s", l.spec.Name, first)
}

// pluginEnv is the environment of a plugin process: the host's, without any
// go-plugin variables that would confuse the handshake, plus the socket
// directory. go-plugin adds the cookie and protocol variables.
func pluginEnv(hostEnv []string, socketDir string) []string {
	env := make([]string, 0, len(hostEnv)+1)
	for _, kv := range hostEnv {
		key, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(key, "PLUGIN_") || key == pluginapi.Handshake.MagicCookieKey {
			continue
		}
		env = append(env, kv)
	}
	if socketDir != "" {
		env = append(env, plugin.EnvUnixSocketDir+"="+socketDir)
	}
	return env
}
