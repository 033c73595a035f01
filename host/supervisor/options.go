package supervisor

import (
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults of Options.
const (
	DefaultStartTimeout  = 10 * time.Second
	DefaultProbeInterval = 10 * time.Second
	DefaultProbeTimeout  = 5 * time.Second
	DefaultExitGrace     = time.Second
)

// DefaultBackoff is the restart back-off: 1 s doubling to 1 min, reset after
// 10 min of healthy running.
var DefaultBackoff = BackoffPolicy{Initial: time.Second, Max: time.Minute, ResetAfter: 10 * time.Minute}

// Options configure a Manager. The zero value is usable: every zero field
// takes its default.
type Options struct {
	// Logger is the host's logger; each plugin logs (and has its own log
	// lines forwarded) under Logger.Named(plugin name). Nil discards.
	Logger hclog.Logger

	// SocketDir is the directory, under the host's root dir, in which
	// plugins create their unix sockets. It is created 0700 if missing.
	// Empty leaves the choice to go-plugin ($TMPDIR). Keep it short: a
	// socket path (this directory plus about 20 bytes) must fit in 107
	// bytes.
	SocketDir string

	// DisableAutoMTLS turns go-plugin's AutoMTLS off; it is on by default.
	DisableAutoMTLS bool

	// StartTimeout bounds a launch: the go-plugin handshake, and then each
	// start check call. Default 10 s.
	StartTimeout time.Duration

	// ProbeInterval is the time between two Probe calls on a running
	// plugin. Default 10 s.
	ProbeInterval time.Duration

	// ProbeTimeout bounds one periodic Probe call. Default 5 s.
	ProbeTimeout time.Duration

	// ExitGrace is how long a call that failed with Unavailable or Canceled
	// waits for the plugin's exit to be confirmed before the error is
	// reported as is. Default 1 s.
	ExitGrace time.Duration

	// Backoff is the restart back-off policy. Zero fields take
	// DefaultBackoff's.
	Backoff BackoffPolicy

	// HostVersion is passed to plugins in Configure.
	HostVersion string

	// Now is the clock for status timestamps. Nil is time.Now.
	Now func() time.Time
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = DefaultProbeInterval
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.ExitGrace <= 0 {
		o.ExitGrace = DefaultExitGrace
	}
	o.Backoff = o.Backoff.withDefaults()
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
