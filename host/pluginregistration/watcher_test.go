package pluginregistration

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/podhost/podhost/internal/registrartest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// handler records what the watcher hands it; refuse, when set, is the
// error of every Register.
type handler struct {
	mu      sync.Mutex
	refuse  error
	changes chan string // "+name endpoint" or "-name"
}

func newHandler() *handler { return &handler{changes: make(chan string, 16)} }

func (h *handler) Register(_ context.Context, name, endpoint string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refuse != nil {
		return h.refuse
	}
	h.changes <- "+" + name + " " + endpoint
	return nil
}

func (h *handler) Deregister(_ context.Context, name string) error {
	h.changes <- "-" + name
	return nil
}

// next waits for the handler's next change.
func (h *handler) next(t *testing.T) string {
	t.Helper()
	select {
	case c := <-h.changes:
		return c
	case <-t.Context().Done():
		t.Fatal("no handler change")
		return ""
	}
}

// event is a recorded node event.
type event struct{ typ, reason, msg string }

// start runs a watcher on a fresh directory until the test ends. Failed
// registrations are retried after an hour, never within a test, unless
// retry is given.
func start(t *testing.T, h Handler, timeout time.Duration, retry ...time.Duration) (dir string, events chan event, w *Watcher) {
	t.Helper()
	dir = socketDir(t)
	events = make(chan event, 16)
	cfg := Config{Dir: dir, Handler: h, Timeout: timeout, Record: func(typ, reason, msg string) { events <- event{typ, reason, msg} }, RetryInitial: time.Hour}
	if len(retry) > 0 {
		cfg.RetryInitial = retry[0]
	}
	w = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return dir, events, w
}

// socketDir is a directory short enough for unix socket paths.
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "reg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func serve(t *testing.T, path string, info *registerapi.PluginInfo) *registrartest.Registrar {
	t.Helper()
	r, err := registrartest.Serve(path, info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

func status(t *testing.T, r *registrartest.Registrar) *registerapi.RegistrationStatus {
	t.Helper()
	s, err := r.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func nextEvent(t *testing.T, events chan event) event {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-t.Context().Done():
		t.Fatal("no event")
		return event{}
	}
}

// A registrar's socket registers its driver and tells it so; the socket
// gone deregisters it. A socket there before the watcher starts counts.
func TestRegisterAndDeregister(t *testing.T) {
	h := newHandler()
	dir := socketDir(t)
	early := serve(t, filepath.Join(dir, "early-reg.sock"), registrartest.CSIInfo("early.csi", "/var/lib/early/csi.sock"))
	w := New(Config{Dir: dir, Handler: h})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	if got := h.next(t); got != "+early.csi /var/lib/early/csi.sock" {
		t.Errorf("handler got %q; want early.csi registered", got)
	}
	if s := status(t, early); !s.GetPluginRegistered() || s.GetError() != "" {
		t.Errorf("early registrar told %v; want registered", s)
	}

	// No endpoint: the registration socket is the driver's (the kubelet's
	// rule); a unix:// endpoint is a path.
	late := serve(t, filepath.Join(dir, "late-reg.sock"), registrartest.CSIInfo("late.csi", ""))
	if got, want := h.next(t), "+late.csi "+filepath.Join(dir, "late-reg.sock"); got != want {
		t.Errorf("handler got %q; want %q", got, want)
	}
	if s := status(t, late); !s.GetPluginRegistered() {
		t.Errorf("late registrar told %v; want registered", s)
	}

	early.Stop()
	if got := h.next(t); got != "-early.csi" {
		t.Errorf("handler got %q; want early.csi deregistered", got)
	}

	// Resync registers what is registered again.
	w.Resync()
	if got, want := h.next(t), "+late.csi "+filepath.Join(dir, "late-reg.sock"); got != want {
		t.Errorf("after Resync handler got %q; want %q", got, want)
	}
}

// Bad registrations are refused with the field named, to the registrar
// and in a Warning event, and nothing reaches the handler.
func TestRefused(t *testing.T) {
	h := newHandler()
	dir, events, _ := start(t, h, 0)
	for _, c := range []struct {
		name string
		info *registerapi.PluginInfo
		want string
	}{
		{"device plugin", &registerapi.PluginInfo{Type: registerapi.DevicePlugin, Name: "gpu", SupportedVersions: []string{"v1beta1"}}, `type: "DevicePlugin" is not served`},
		{"no name", registrartest.CSIInfo("", "/x.sock"), "name: is required"},
		{"old version", &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: "old.csi", SupportedVersions: []string{"0.3.0", "2.0.0", "junk"}}, `supported_versions: none of ["0.3.0" "2.0.0" "junk"] is a CSI version 1.x`},
		{"relative endpoint", registrartest.CSIInfo("rel.csi", "csi.sock"), `endpoint: "csi.sock" is not an absolute socket path`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := serve(t, filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".sock"), c.info)
			s := status(t, r)
			if s.GetPluginRegistered() || !strings.Contains(s.GetError(), c.want) {
				t.Errorf("registrar told %v; want refused with %q", s, c.want)
			}
			if e := nextEvent(t, events); e.typ != "Warning" || e.reason != ReasonRegistrationFailed || !strings.Contains(e.msg, c.want) {
				t.Errorf("event %+v; want a %s warning saying %q", e, ReasonRegistrationFailed, c.want)
			}
		})
	}
	select {
	case c := <-h.changes:
		t.Errorf("handler got %q from a refused registration", c)
	default:
	}
}

// The handler's refusal (a name clash with a configured driver, a driver
// that does not answer) reaches the registrar.
func TestHandlerRefuses(t *testing.T) {
	h := newHandler()
	h.refuse = errors.New(`name: csi driver "a.csi" is listed in plugin volume-csi's config.drivers`)
	dir, events, _ := start(t, h, 0)
	r := serve(t, filepath.Join(dir, "a.sock"), registrartest.CSIInfo("a.csi", "/a/csi.sock"))
	if s := status(t, r); s.GetPluginRegistered() || !strings.Contains(s.GetError(), "config.drivers") {
		t.Errorf("registrar told %v; want refused naming config.drivers", s)
	}
	if e := nextEvent(t, events); e.reason != ReasonRegistrationFailed {
		t.Errorf("event %+v; want %s", e, ReasonRegistrationFailed)
	}
	// Removing a refused socket deregisters nothing.
	r.Stop()
	h.mu.Lock()
	h.refuse = nil
	h.mu.Unlock()
	r2 := serve(t, filepath.Join(dir, "b.sock"), registrartest.CSIInfo("b.csi", "/b/csi.sock"))
	if got := h.next(t); got != "+b.csi /b/csi.sock" {
		t.Errorf("handler got %q; want b.csi registered (and nothing for the refused a.csi)", got)
	}
	status(t, r2)
}

// A registration the Handler refused (the volume plugin down) is tried
// again with back-off on the same socket, as the kubelet's plugin manager
// does, until it is registered; the registrar is told each outcome. An
// answer that fails validation is not retried, and its event says so.
func TestRefusedRetried(t *testing.T) {
	h := newHandler()
	h.refuse = errors.New("plugin volume-csi is not running")
	dir, events, _ := start(t, h, 0, 50*time.Millisecond)
	bad := serve(t, filepath.Join(dir, "bad.sock"), registrartest.CSIInfo("", "/bad.sock"))
	if e := nextEvent(t, events); !strings.Contains(e.msg, "(not retried)") || !strings.Contains(e.msg, "name: is required") {
		t.Errorf("event %+v; want the invalid answer refused, not retried", e)
	}
	status(t, bad)
	r := serve(t, filepath.Join(dir, "a.sock"), registrartest.CSIInfo("a.csi", "/a/csi.sock"))
	for i, want := range []string{"retried in 50ms", "retried in 100ms"} {
		if s := status(t, r); s.GetPluginRegistered() || !strings.Contains(s.GetError(), "not running") {
			t.Errorf("try %d: registrar told %v; want refused", i, s)
		}
		if e := nextEvent(t, events); e.reason != ReasonRegistrationFailed || !strings.Contains(e.msg, want) {
			t.Errorf("try %d: event %+v; want %s, %s", i, e, ReasonRegistrationFailed, want)
		}
	}
	h.mu.Lock()
	h.refuse = nil
	h.mu.Unlock()
	// Later tries may still be refused before the handler changed.
	for {
		s := status(t, r)
		if s.GetPluginRegistered() {
			break
		}
		nextEvent(t, events)
	}
	if got := h.next(t); got != "+a.csi /a/csi.sock" {
		t.Errorf("handler got %q; want a.csi registered on a retry", got)
	}
	select {
	case c := <-h.changes:
		t.Errorf("handler got %q; the invalid registrar must not be retried", c)
	default:
	}
}

// A socket nobody answers on is refused once the timeout passes, and the
// watcher goes on with the next one; a file that is no socket is ignored.
func TestSilentSocket(t *testing.T) {
	h := newHandler()
	dir, events, _ := start(t, h, 500*time.Millisecond)
	if err := os.WriteFile(filepath.Join(dir, "not-a-socket"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A listener that never accepts a gRPC conversation.
	l, err := net.Listen("unix", filepath.Join(dir, "silent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if e := nextEvent(t, events); e.reason != ReasonRegistrationFailed || !strings.Contains(e.msg, "GetInfo") {
		t.Errorf("event %+v; want %s about GetInfo", e, ReasonRegistrationFailed)
	}
	r := serve(t, filepath.Join(dir, "ok.sock"), registrartest.CSIInfo("ok.csi", "/ok.sock"))
	if got := h.next(t); got != "+ok.csi /ok.sock" {
		t.Errorf("handler got %q; want ok.csi", got)
	}
	status(t, r)
}

// A name registered again from a newer socket moves there: removing the
// older socket then keeps it registered.
func TestNameMovesToNewerSocket(t *testing.T) {
	h := newHandler()
	dir, _, _ := start(t, h, 0)
	old := serve(t, filepath.Join(dir, "old.sock"), registrartest.CSIInfo("d.csi", "/old/csi.sock"))
	h.next(t)
	status(t, old)
	newer := serve(t, filepath.Join(dir, "new.sock"), registrartest.CSIInfo("d.csi", "/new/csi.sock"))
	if got := h.next(t); got != "+d.csi /new/csi.sock" {
		t.Errorf("handler got %q; want d.csi at the new endpoint", got)
	}
	status(t, newer)
	old.Stop()
	newer.Stop()
	if got := h.next(t); got != "-d.csi" {
		t.Errorf("handler got %q; want d.csi deregistered once, with the newer socket", got)
	}
	select {
	case c := <-h.changes:
		t.Errorf("handler got %q; want nothing more", c)
	default:
	}
}

// A refused socket seen twice (in Run's first listing and in its Create
// event, both) is asked and refused once; a registrar gone while it was
// asked is not refused at all. Before, the second sight asked again and
// recorded a second warning, which TestRefused's next case read as its own.
func TestRefusedOnce(t *testing.T) {
	dir := socketDir(t)
	var events []string
	w := New(Config{Dir: dir, Handler: newHandler(), Timeout: time.Second, RetryInitial: time.Hour,
		Record: func(typ, reason, msg string) { events = append(events, reason+": "+msg) }})
	path := filepath.Join(dir, "no-name.sock")
	serve(t, path, registrartest.CSIInfo("", "/x.sock"))
	w.added(t.Context(), path)
	w.added(t.Context(), path)
	if len(events) != 1 || !strings.Contains(events[0], "name: is required") {
		t.Fatalf("events %q; want one refusal", events)
	}

	// A socket nobody serves, gone before its GetInfo gives up.
	gone := filepath.Join(dir, "gone.sock")
	l, err := net.Listen("unix", gone)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // the file stays; dials are refused
	time.AfterFunc(200*time.Millisecond, func() { os.Remove(gone) })
	w.added(t.Context(), gone)
	if len(events) != 1 {
		t.Fatalf("events %q; want no refusal of a registrar that went away", events)
	}
	if _, ok := w.retries[gone]; ok {
		t.Fatal("a registrar that went away is retried")
	}
}
