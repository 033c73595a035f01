package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// exitPollInterval is how often a running plugin's process is polled, as a
// fallback to go-plugin cancelling the connection's Done context.
const exitPollInterval = 250 * time.Millisecond

// supervisor runs one plugin: launch and check, watch and probe, and after
// an exit or a failed launch wait the back-off and launch again, until its
// context is cancelled.
type supervisor struct {
	spec   PluginSpec
	opts   *Options
	log    hclog.Logger
	events *hub
	launch func(ctx context.Context) (*instance, inStarted, error)

	mu   sync.Mutex
	rec  record
	inst *instance // the running instance, nil unless rec.status.State.callable()
}

func newSupervisor(spec PluginSpec, opts *Options, events *hub) *supervisor {
	l := &launcher{spec: spec, opts: opts}
	return &supervisor{
		spec:   spec,
		opts:   opts,
		log:    opts.Logger.Named(spec.Name),
		events: events,
		launch: l.launch,
		rec:    newRecord(spec, opts.Now()),
	}
}

// apply feeds in to the record and publishes the events it causes. setInst
// replaces the current instance in the same step.
func (s *supervisor) apply(in input, inst *instance, setInst bool) {
	now := s.opts.Now()
	s.mu.Lock()
	var types []EventType
	s.rec, types = s.rec.apply(in, now)
	if setInst {
		s.inst = inst
	}
	st := s.rec.status
	s.mu.Unlock()
	for _, t := range types {
		ev := Event{Plugin: s.spec.Name, Type: t, State: st.State, Restarts: st.Restarts, Time: now}
		switch t {
		case EventExited, EventStartFailed, EventRefused, EventNotReady:
			ev.Err = st.LastError
		}
		s.events.publish(ev)
	}
}

// status returns a copy of the plugin's status.
func (s *supervisor) status() PluginStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.rec.status
	st.Capabilities = append([]string(nil), st.Capabilities...)
	return st
}

// current returns the running instance, or an error saying why there is
// none.
func (s *supervisor) current() (*instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.rec.status
	switch {
	case s.inst != nil && st.State.callable():
		return s.inst, nil
	case st.State == StateStarting:
		return nil, fmt.Errorf("plugin %q is starting: %w (%w)", s.spec.Name, ErrPluginNotReady, ErrNotSent)
	case st.State == StateRefused:
		return nil, fmt.Errorf("plugin %q: %w: %s (%w)", s.spec.Name, ErrPluginRefused, st.LastError, ErrNotSent)
	case st.State == StateStopped:
		return nil, fmt.Errorf("plugin %q is stopped: %w (%w)", s.spec.Name, ErrPluginExited, ErrNotSent)
	default:
		return nil, fmt.Errorf("plugin %q is down (%s): %w (%w)", s.spec.Name, st.State, ErrPluginExited, ErrNotSent)
	}
}

// run supervises the plugin until ctx is cancelled. The result of the first
// launch is sent on first (nil when it started).
func (s *supervisor) run(ctx context.Context, first chan<- error) {
	bo := backoff{policy: s.opts.Backoff}
	report := func(err error) {
		if first != nil {
			first <- err
			first = nil
		}
	}
	defer func() {
		report(fmt.Errorf("plugin %q: %w", s.spec.Name, ErrManagerStopped))
		s.apply(inStopped{}, nil, true)
	}()
	for ctx.Err() == nil {
		s.apply(inLaunch{}, nil, true)
		inst, started, err := s.safeLaunch(ctx)
		var delay time.Duration
		if err != nil {
			if ctx.Err() != nil {
				report(err)
				return
			}
			refused := errors.Is(err, ErrPluginRefused)
			s.log.Error("plugin failed to start", "plugin", s.spec.Name, "refused", refused, "err", err)
			s.apply(inStartFailed{err: err.Error(), refused: refused}, nil, true)
			report(err)
			delay = bo.failed(0)
		} else {
			s.log.Info("plugin started", "plugin", s.spec.Name, "version", started.version, "pid", started.pid, "ready", started.ready)
			s.apply(started, inst, true)
			report(nil)
			exitErr := s.watch(ctx, inst)
			ranFor := s.opts.Now().Sub(inst.started)
			inst.kill()
			if ctx.Err() != nil {
				return
			}
			if st := inst.exitStatus(); st != "" {
				exitErr = fmt.Errorf("%w (%s)", exitErr, st)
			}
			s.log.Error("plugin exited", "plugin", s.spec.Name, "err", exitErr)
			s.apply(inExited{err: exitErr.Error()}, nil, true)
			delay = bo.failed(ranFor)
		}
		s.publishBackoff(delay)
		if !sleep(ctx, delay) {
			return
		}
	}
}

// safeLaunch launches, turning a panic in the launch path (go-plugin
// included) into a failed start: a plugin never brings the host down.
func (s *supervisor) safeLaunch(ctx context.Context) (inst *instance, started inStarted, err error) {
	defer func() {
		if r := recover(); r != nil {
			inst, started = nil, inStarted{}
			err = fmt.Errorf("launch plugin %q: panic: %v", s.spec.Name, r)
		}
	}()
	return s.launch(ctx)
}

func (s *supervisor) publishBackoff(delay time.Duration) {
	st := s.status()
	s.log.Info("plugin restarts after back-off", "plugin", s.spec.Name, "delay", delay, "restarts", st.Restarts)
	s.events.publish(Event{Plugin: s.spec.Name, Type: EventBackoff, State: st.State, Restarts: st.Restarts, Delay: delay, Time: s.opts.Now()})
}

// watch probes the running instance every ProbeInterval until the process
// exits (it returns why) or ctx is cancelled (it returns ctx's error).
func (s *supervisor) watch(ctx context.Context, inst *instance) error {
	probeTick := time.NewTicker(s.opts.ProbeInterval)
	defer probeTick.Stop()
	exitTick := time.NewTicker(exitPollInterval)
	defer exitTick.Stop()
	id := identityClient(inst)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-inst.died.Done():
			return fmt.Errorf("plugin %q: %w", s.spec.Name, ErrPluginExited)
		case <-exitTick.C:
			if inst.exited() {
				return fmt.Errorf("plugin %q: %w", s.spec.Name, ErrPluginExited)
			}
		case <-probeTick.C:
			pctx, cancel := context.WithTimeout(ctx, s.opts.ProbeTimeout)
			ready, notReady, err := probe(pctx, id)
			cancel()
			if errors.Is(err, ErrPluginExited) || ctx.Err() != nil {
				continue // the next iteration sees why
			}
			if !ready {
				s.log.Warn("plugin probe failed", "plugin", s.spec.Name, "err", notReady)
			}
			s.apply(inProbe{ready: ready, notReady: notReady}, nil, false)
		}
	}
}

// sleep waits d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
