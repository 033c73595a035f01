package supervisor

import (
	"time"

	"github.com/podhost/podhost/pluginapi"
)

// State is where a plugin is in its supervision.
type State string

// The plugin states.
const (
	// StateStarting: the process is being launched or checked.
	StateStarting State = "starting"
	// StateRunning: the plugin passed its start checks and its last probe
	// said ready.
	StateRunning State = "running"
	// StateNotReady: the plugin runs and serves calls, but its last probe
	// failed or said not ready.
	StateNotReady State = "not-ready"
	// StateBackoff: the process exited or could not be launched; it is
	// relaunched after the back-off delay.
	StateBackoff State = "backoff"
	// StateRefused: the plugin failed a start check; it is relaunched after
	// the back-off delay (the binary or the config may be fixed meanwhile).
	StateRefused State = "refused"
	// StateStopped: the Manager stopped the plugin.
	StateStopped State = "stopped"
)

// PluginStatus is what `podhost plugins list` shows about one plugin.
type PluginStatus struct {
	Name string
	Kind pluginapi.Kind
	// Version is the plugin's own version, from GetInfo.
	Version string
	State   State
	// Ready is true when the plugin runs and its last probe said ready.
	Ready bool
	// Restarts counts launches after the first one.
	Restarts int
	// LastError is the last launch, exit or probe error; it stays after a
	// recovery, for the record.
	LastError string
	// Capabilities the plugin declared in GetInfo.
	Capabilities []string
	// PID of the current plugin process; 0 when none runs.
	PID int
	// Since is when State last changed.
	Since time.Time
}

// input is something that happened to a plugin, fed to record.apply.
type input interface{ isInput() }

type (
	// inLaunch: a launch begins.
	inLaunch struct{}
	// inStarted: the launch passed its checks.
	inStarted struct {
		version      string
		capabilities []string
		pid          int
		ready        bool
		// notReady is the probe's message or error when !ready.
		notReady string
	}
	// inStartFailed: the launch failed; refused when a check refused it.
	inStartFailed struct {
		err     string
		refused bool
	}
	// inExited: the running process exited.
	inExited struct{ err string }
	// inProbe: a periodic probe answered.
	inProbe struct {
		ready    bool
		notReady string
	}
	// inStopped: the Manager stopped the plugin.
	inStopped struct{}
)

func (inLaunch) isInput()      {}
func (inStarted) isInput()     {}
func (inStartFailed) isInput() {}
func (inExited) isInput()      {}
func (inProbe) isInput()       {}
func (inStopped) isInput()     {}

// record is the supervisor's view of one plugin. apply is its only
// mutation: a plain function from (record, input, time) to the next record
// and the events to publish.
type record struct {
	status   PluginStatus
	launches int
}

func newRecord(spec PluginSpec, now time.Time) record {
	return record{status: PluginStatus{Name: spec.Name, Kind: spec.Kind, State: StateStarting, Since: now}}
}

// apply returns the record after in happened at now, and the types of the
// events it causes, in order.
func (r record) apply(in input, now time.Time) (record, []EventType) {
	st := &r.status
	setState := func(s State) {
		if st.State != s {
			st.State = s
			st.Since = now
		}
	}
	if st.State == StateStopped {
		return r, nil // terminal
	}
	var events []EventType
	switch in := in.(type) {
	case inLaunch:
		r.launches++
		if r.launches > 1 {
			st.Restarts++
		}
		st.Ready = false
		st.PID = 0
		setState(StateStarting)
	case inStarted:
		st.Version = in.version
		st.Capabilities = append([]string(nil), in.capabilities...)
		st.PID = in.pid
		st.Ready = in.ready
		if r.launches > 1 {
			events = append(events, EventRestarted)
		} else {
			events = append(events, EventStarted)
		}
		if in.ready {
			setState(StateRunning)
			events = append(events, EventReady)
		} else {
			st.LastError = in.notReady
			setState(StateNotReady)
			events = append(events, EventNotReady)
		}
	case inStartFailed:
		st.LastError = in.err
		st.Ready = false
		st.PID = 0
		if in.refused {
			setState(StateRefused)
			events = append(events, EventRefused)
		} else {
			setState(StateBackoff)
			events = append(events, EventStartFailed)
		}
	case inExited:
		if st.State != StateRunning && st.State != StateNotReady {
			return r, nil
		}
		st.LastError = in.err
		st.Ready = false
		st.PID = 0
		setState(StateBackoff)
		events = append(events, EventExited)
	case inProbe:
		if st.State != StateRunning && st.State != StateNotReady {
			return r, nil
		}
		if in.ready && !st.Ready {
			st.Ready = true
			setState(StateRunning)
			events = append(events, EventReady)
		} else if !in.ready && st.Ready {
			st.Ready = false
			st.LastError = in.notReady
			setState(StateNotReady)
			events = append(events, EventNotReady)
		}
	case inStopped:
		st.Ready = false
		st.PID = 0
		setState(StateStopped)
		events = append(events, EventStopped)
	}
	return r, events
}

// callable reports whether calls may be sent to the plugin in this state.
func (s State) callable() bool { return s == StateRunning || s == StateNotReady }
