package pluginregistration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/util/version"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// DefaultDirName is the registration directory's name under the host's
// root directory, the kubelet's.
const DefaultDirName = "plugins_registry"

// DefaultTimeout bounds the registration of one socket: dialing it,
// GetInfo, the Handler and NotifyRegistrationStatus.
const DefaultTimeout = 10 * time.Second

// The back-off of a registration that failed for a reason that may pass,
// the kubelet's plugin manager's: half a second, doubling up to about two
// minutes.
const (
	DefaultRetryInitial = 500 * time.Millisecond
	DefaultRetryMax     = 2*time.Minute + 2*time.Second
)

// errInvalid marks a registrar's answer that fails validation: it is not
// retried (the same registrar gives the same answer), while a registrar
// that did not answer or a Handler that refused is.
var errInvalid = errors.New("invalid registration")

// Event reasons, recorded on the node.
const (
	ReasonRegistered         = "CSIDriverRegistered"
	ReasonRegistrationFailed = "CSIDriverRegistrationFailed"
	ReasonDeregistered       = "CSIDriverDeregistered"
)

// Handler takes the CSI drivers that register.
type Handler interface {
	// Register makes driver name, served at endpoint (an absolute socket
	// path), usable; its error is told to the registrar.
	Register(ctx context.Context, name, endpoint string) error
	// Deregister forgets driver name.
	Deregister(ctx context.Context, name string) error
}

// Config is what a Watcher needs.
type Config struct {
	// Dir is the registration directory; it is created if missing.
	Dir     string
	Handler Handler
	Log     hclog.Logger
	// Record records a Node event (type Normal or Warning); nil records
	// none.
	Record func(typ, reason, message string)
	// Timeout bounds one socket's registration; zero is DefaultTimeout.
	Timeout time.Duration
	// RetryInitial and RetryMax bound the back-off of a failed
	// registration; zero: DefaultRetryInitial and DefaultRetryMax.
	RetryInitial, RetryMax time.Duration
}

// Watcher serves the registration directory.
type Watcher struct {
	cfg    Config
	resync chan struct{}
	// sockets maps each registered socket to its registration, retries
	// each socket whose registration failed to its next try; only Run's
	// goroutine touches them.
	sockets map[string]registration
	retries map[string]retry
	// refused maps each socket whose answer failed validation (never
	// retried) to its file, so that the same socket seen again (in the
	// first listing and in a Create event) is not asked and refused twice.
	refused map[string]os.FileInfo
}

// retry is when a failed registration is tried again, and the back-off
// after that try fails.
type retry struct {
	at    time.Time
	delay time.Duration
}

// registration is one registered driver.
type registration struct {
	name, endpoint string
}

// New builds a Watcher; Run starts it.
func New(cfg Config) *Watcher {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	if cfg.Record == nil {
		cfg.Record = func(string, string, string) {}
	}
	if cfg.RetryInitial == 0 {
		cfg.RetryInitial = DefaultRetryInitial
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	return &Watcher{cfg: cfg, resync: make(chan struct{}, 1), sockets: map[string]registration{}, retries: map[string]retry{}, refused: map[string]os.FileInfo{}}
}

// Resync makes Run register every registered driver again.
func (w *Watcher) Resync() {
	select {
	case w.resync <- struct{}{}:
	default:
	}
}

// Run watches the directory until ctx ends: it registers the sockets there
// now, then each new one, and deregisters each removed. Drivers stay
// registered when it returns (a host stop is no driver leaving).
func (w *Watcher) Run(ctx context.Context) error {
	if err := os.MkdirAll(w.cfg.Dir, 0o750); err != nil {
		return fmt.Errorf("plugin registration directory: %w", err)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", w.cfg.Dir, err)
	}
	defer fw.Close()
	if err := fw.Add(w.cfg.Dir); err != nil {
		return fmt.Errorf("watching %s: %w", w.cfg.Dir, err)
	}
	entries, err := os.ReadDir(w.cfg.Dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", w.cfg.Dir, err)
	}
	for _, e := range entries {
		w.added(ctx, filepath.Join(w.cfg.Dir, e.Name()))
	}
	for {
		timer := w.nextRetry()
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
			w.retryDue(ctx)
		case <-w.resync:
			w.registerAgain(ctx)
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			w.cfg.Log.Warn("watching the plugin registration directory", "dir", w.cfg.Dir, "err", err)
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			switch {
			case ev.Has(fsnotify.Create):
				w.added(ctx, ev.Name)
			case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
				w.removed(ctx, ev.Name)
			}
		}
		timer.Stop()
	}
}

// nextRetry is a timer for the earliest retry; one that never fires when
// there is none.
func (w *Watcher) nextRetry() *time.Timer {
	var first time.Time
	for _, r := range w.retries {
		if first.IsZero() || r.at.Before(first) {
			first = r.at
		}
	}
	if first.IsZero() {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return t
	}
	return time.NewTimer(time.Until(first))
}

// retryDue tries again every failed registration that is due; a socket
// gone meanwhile is forgotten.
func (w *Watcher) retryDue(ctx context.Context) {
	now := time.Now()
	for path, r := range w.retries {
		if r.at.After(now) {
			continue
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSocket == 0 {
			delete(w.retries, path)
			continue
		}
		w.added(ctx, path)
	}
}

// failed schedules the next try of the registration at path, or none for
// an answer that failed validation.
func (w *Watcher) failed(path string, err error) {
	if errors.Is(err, errInvalid) {
		delete(w.retries, path)
		return
	}
	delay := w.cfg.RetryInitial
	if r, ok := w.retries[path]; ok {
		delay = min(2*r.delay, w.cfg.RetryMax)
	}
	w.retries[path] = retry{at: time.Now().Add(delay), delay: delay}
}

// added registers the socket at path, if it is one.
func (w *Watcher) added(ctx context.Context, path string) {
	if strings.HasPrefix(filepath.Base(path), ".") {
		return
	}
	if _, ok := w.sockets[path]; ok {
		// Registered already: a socket made while Run starts is both in
		// its first listing and in a Create event. One made again at the
		// same path was removed (and forgotten) first.
		return
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 {
		return
	}
	if prev, ok := w.refused[path]; ok && os.SameFile(prev, fi) {
		return // this very socket was refused already
	}
	delete(w.refused, path)
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	reg, err := w.register(ctx, path)
	if err != nil {
		if now, serr := os.Lstat(path); serr != nil || !os.SameFile(fi, now) {
			// The registrar went away while it was asked: a removal,
			// not a refusal (its Remove event forgets it).
			delete(w.retries, path)
			w.cfg.Log.Debug("a plugin registration socket went away while it was asked", "socket", path, "err", err)
			return
		}
		if errors.Is(err, errInvalid) {
			w.refused[path] = fi
		}
		w.failed(path, err)
		retry := "not retried"
		if r, ok := w.retries[path]; ok {
			retry = fmt.Sprintf("retried in %s", r.delay)
		}
		w.cfg.Log.Warn("refused a plugin registration", "socket", path, "err", err, "retry", retry)
		w.cfg.Record("Warning", ReasonRegistrationFailed, fmt.Sprintf("plugin registration at %s refused (%s): %v", path, retry, err))
		return
	}
	delete(w.retries, path)
	for other, r := range w.sockets {
		if r.name == reg.name && other != path {
			delete(w.sockets, other) // the newer socket takes the name
		}
	}
	w.sockets[path] = reg
	w.cfg.Log.Info("csi driver registered", "driver", reg.name, "endpoint", reg.endpoint, "socket", path)
	w.cfg.Record("Normal", ReasonRegistered, fmt.Sprintf("csi driver %s registered at %s (socket %s)", reg.name, reg.endpoint, path))
}

// register asks the registrar at path who it is, validates the answer,
// hands the driver to the Handler and tells the registrar the outcome.
// The error says why the registration failed; a registrar that could not
// be told is only logged.
func (w *Watcher) register(ctx context.Context, path string) (registration, error) {
	// A registrar's socket appears at bind, a moment before it listens:
	// a first dial may be refused, and gRPC's default reconnect delay (1 s)
	// would eat most of a short Timeout.
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 2, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		}))
	if err != nil {
		return registration{}, fmt.Errorf("dialing the registrar: %w", err)
	}
	defer conn.Close()
	cl := registerapi.NewRegistrationClient(conn)
	// The socket may appear before its server listens: wait for it, within
	// the timeout.
	info, err := cl.GetInfo(ctx, &registerapi.InfoRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return registration{}, fmt.Errorf("GetInfo: %w", err)
	}
	reg, err := validate(info, path)
	if err == nil {
		err = w.cfg.Handler.Register(ctx, reg.name, reg.endpoint)
		if err != nil {
			err = fmt.Errorf("csi driver %q: %w", reg.name, err)
		}
	}
	status := &registerapi.RegistrationStatus{PluginRegistered: err == nil}
	if err != nil {
		status.Error = err.Error()
	}
	if _, nerr := cl.NotifyRegistrationStatus(ctx, status); nerr != nil {
		w.cfg.Log.Warn("telling a registrar its registration status", "socket", path, "registered", err == nil, "err", nerr)
	}
	return reg, err
}

// validate checks a registrar's answer; the error names the field.
func validate(info *registerapi.PluginInfo, socket string) (registration, error) {
	var errs []error
	if t := info.GetType(); t != registerapi.CSIPlugin {
		errs = append(errs, fmt.Errorf("type: %q is not served; want %q", t, registerapi.CSIPlugin))
	}
	name := info.GetName()
	if name == "" {
		errs = append(errs, errors.New("name: is required"))
	}
	if !supported(info.GetSupportedVersions()) {
		errs = append(errs, fmt.Errorf("supported_versions: none of %q is a CSI version 1.x", info.GetSupportedVersions()))
	}
	endpoint := strings.TrimPrefix(info.GetEndpoint(), "unix://")
	if endpoint == "" {
		endpoint = socket
	}
	if !filepath.IsAbs(endpoint) {
		errs = append(errs, fmt.Errorf("endpoint: %q is not an absolute socket path", info.GetEndpoint()))
	}
	if len(errs) > 0 {
		return registration{}, fmt.Errorf("%w: %w", errInvalid, errors.Join(errs...))
	}
	return registration{name: name, endpoint: filepath.Clean(endpoint)}, nil
}

// supported tells whether one of versions is CSI 1.x, the version podhost
// speaks.
func supported(versions []string) bool {
	for _, v := range versions {
		if pv, err := version.ParseGeneric(v); err == nil && pv.Major() == 1 {
			return true
		}
	}
	return false
}

// removed deregisters the driver of a removed socket, unless a newer
// socket took its name.
func (w *Watcher) removed(ctx context.Context, path string) {
	delete(w.retries, path)
	delete(w.refused, path)
	reg, ok := w.sockets[path]
	if !ok {
		return
	}
	delete(w.sockets, path)
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	if err := w.cfg.Handler.Deregister(ctx, reg.name); err != nil {
		w.cfg.Log.Warn("deregistering a csi driver", "driver", reg.name, "socket", path, "err", err)
		w.cfg.Record("Warning", ReasonRegistrationFailed, fmt.Sprintf("csi driver %s: deregistering: %v", reg.name, err))
		return
	}
	w.cfg.Log.Info("csi driver deregistered", "driver", reg.name, "socket", path)
	w.cfg.Record("Normal", ReasonDeregistered, fmt.Sprintf("csi driver %s deregistered (socket %s removed)", reg.name, path))
}

// registerAgain hands every registered driver to the Handler again.
func (w *Watcher) registerAgain(ctx context.Context) {
	for path, reg := range w.sockets {
		ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
		err := w.cfg.Handler.Register(ctx, reg.name, reg.endpoint)
		cancel()
		if err != nil {
			w.cfg.Log.Warn("registering a csi driver again", "driver", reg.name, "socket", path, "err", err)
			w.cfg.Record("Warning", ReasonRegistrationFailed, fmt.Sprintf("csi driver %s: registering again: %v", reg.name, err))
		}
	}
}
