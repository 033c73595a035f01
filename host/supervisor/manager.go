package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"google.golang.org/grpc"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Manager supervises every configured plugin. Create it with NewManager,
// call Start once, and Stop when the host shuts down. Its methods are safe
// for concurrent use.
type Manager struct {
	opts   Options
	events *hub

	mu      sync.Mutex
	started bool
	sups    map[string]*supervisor
	order   []string
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// NewManager returns a Manager with opts (zero fields take defaults).
func NewManager(opts Options) *Manager {
	opts = opts.withDefaults()
	return &Manager{opts: opts, events: newHub(opts.Logger), sups: make(map[string]*supervisor)}
}

// Start launches every plugin in specs and waits for the first launch of
// each to pass or fail its checks (or for ctx to end). It returns an error
// naming every required plugin that was refused or failed to start, and
// nil when all required plugins run. Plugins that are not running (required
// or not) are retried with back-off in the background until Stop; a refused
// optional plugin is only logged.
//
// ctx bounds the wait for the first launches; supervision continues until
// Stop and carries ctx's values. Start may be called once.
func (m *Manager) Start(ctx context.Context, specs []PluginSpec) error {
	if err := validateSpecs(specs); err != nil {
		return fmt.Errorf("plugin specs: %w", err)
	}
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return errors.New("plugin manager already started")
	}
	m.started = true
	if m.opts.SocketDir != "" {
		if err := os.MkdirAll(m.opts.SocketDir, 0o700); err != nil {
			m.mu.Unlock()
			return fmt.Errorf("plugin socket dir: %w", err)
		}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	firsts := make(map[string]chan error, len(specs))
	for _, spec := range specs {
		sup := newSupervisor(spec, &m.opts, m.events)
		m.sups[spec.Name] = sup
		m.order = append(m.order, spec.Name)
		first := make(chan error, 1)
		firsts[spec.Name] = first
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			sup.run(runCtx, first)
		}()
	}
	m.mu.Unlock()

	var errs []error
	for _, spec := range specs {
		select {
		case err := <-firsts[spec.Name]:
			var refusal *RefusedError
			switch {
			case err == nil || !spec.Required:
			case errors.As(err, &refusal):
				errs = append(errs, fmt.Errorf("required %w", err))
			default:
				errs = append(errs, fmt.Errorf("required plugin %q did not start: %w", spec.Name, err))
			}
		case <-ctx.Done():
			if spec.Required {
				errs = append(errs, fmt.Errorf("required plugin %q did not start: %w", spec.Name, ctx.Err()))
			}
		}
	}
	return errors.Join(errs...)
}

// Stop stops every plugin (go-plugin asks each to shut down, and kills it
// after 2 s) and waits until the supervisors are gone, or until ctx ends.
// Containers started through the plugins are left alone. Subscriptions are
// closed. Calls made after Stop fail with ErrPluginExited.
func (m *Manager) Stop(ctx context.Context) error {
	m.mu.Lock()
	cancel := m.cancel
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		m.events.close()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop plugins: %w", ctx.Err())
	}
}

// Subscribe returns a channel of every plugin event from now on and the
// function that ends the subscription (it closes the channel). Stop closes
// it too. The subscriber must keep reading: a subscriber more than 256
// events behind loses events (a warning is logged), and should then resync
// from List.
func (m *Manager) Subscribe() (<-chan Event, func()) { return m.events.subscribe() }

// List returns the status of every plugin, in the order of the specs.
func (m *Manager) List() []PluginStatus {
	m.mu.Lock()
	sups := make([]*supervisor, 0, len(m.order))
	for _, name := range m.order {
		sups = append(sups, m.sups[name])
	}
	m.mu.Unlock()
	out := make([]PluginStatus, 0, len(sups))
	for _, s := range sups {
		out = append(out, s.status())
	}
	return out
}

// Status returns the status of one plugin.
func (m *Manager) Status(name string) (PluginStatus, error) {
	sup, err := m.supervisor(name)
	if err != nil {
		return PluginStatus{}, err
	}
	return sup.status(), nil
}

func (m *Manager) supervisor(name string) (*supervisor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sup, ok := m.sups[name]
	if !ok {
		return nil, fmt.Errorf("plugin %q: %w", name, ErrUnknownPlugin)
	}
	return sup, nil
}

// Client returns a gRPC connection to the named plugin that always reaches
// its current instance (see Identity). Generated clients of any of the
// plugin's services can be built on it.
func (m *Manager) Client(name string) (grpc.ClientConnInterface, error) {
	sup, err := m.supervisor(name)
	if err != nil {
		return nil, err
	}
	return pluginConn{sup: sup}, nil
}

// Identity returns the Identity client of the named plugin. The client
// stays valid across restarts: each call goes to the instance running at
// that moment. A call while no instance runs fails at once with
// ErrPluginExited (down, in back-off, or stopped), ErrPluginNotReady
// (launching) or ErrPluginRefused; a call in flight when the plugin dies
// fails with ErrPluginExited.
func (m *Manager) Identity(name string) (pluginv1.IdentityClient, error) {
	cc, err := m.Client(name)
	if err != nil {
		return nil, err
	}
	return pluginv1.NewIdentityClient(cc), nil
}

// Runtime returns the Runtime client of the named runtime plugin; see
// Identity for how calls behave.
func (m *Manager) Runtime(name string) (runtimev1.RuntimeClient, error) {
	cc, err := m.kindClient(name, pluginapi.KindRuntime)
	if err != nil {
		return nil, err
	}
	return runtimev1.NewRuntimeClient(cc), nil
}

func (m *Manager) kindClient(name string, kind pluginapi.Kind) (grpc.ClientConnInterface, error) {
	sup, err := m.supervisor(name)
	if err != nil {
		return nil, err
	}
	if sup.spec.Kind != kind {
		return nil, fmt.Errorf("plugin %q is a %s plugin, not %s: %w", name, sup.spec.Kind, kind, ErrUnknownPlugin)
	}
	return pluginConn{sup: sup}, nil
}

// Names returns the configured plugin names of the given kind, in spec
// order.
func (m *Manager) Names(kind pluginapi.Kind) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(m.order), func(n string) bool { return m.sups[n].spec.Kind != kind })
}
