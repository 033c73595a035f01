package events

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

// Event types.
const (
	Normal  = lifecycle.EventNormal
	Warning = lifecycle.EventWarning
)

// Reasons the host records. The lifecycle core may record others
// (FailedToKillPod, …); any string is accepted.
const (
	// Pod image and containers.
	ReasonPulling = "Pulling"
	ReasonPulled  = "Pulled"
	ReasonCreated = "Created"
	ReasonStarted = "Started"
	ReasonKilling = "Killing"
	ReasonBackOff = "BackOff"
	ReasonFailed  = "Failed"
	// Pod sync and termination.
	ReasonFailedSync          = "FailedSync"
	ReasonFailedMount         = "FailedMount"
	ReasonFailedUnmount       = "FailedUnmount"
	ReasonFailedToKillPod     = "FailedToKillPod"
	ReasonExceededGracePeriod = "ExceededGracePeriod"
	// Plugins.
	ReasonPluginStarted   = "PluginStarted"
	ReasonPluginRestarted = "PluginRestarted"
	ReasonPluginExited    = "PluginExited"
	ReasonPluginRefused   = "PluginRefused"
	ReasonPluginBackOff   = "PluginBackOff"
	ReasonPluginNotReady  = "PluginNotReady"
	// Node.
	ReasonStarting          = "Starting"
	ReasonNodeReady         = "NodeReady"
	ReasonShutdown          = "Shutdown"
	ReasonDatabaseRecovered = "DatabaseRecovered"
)

// Kind is the kind of object an event is about.
type Kind string

// The kinds.
const (
	KindPod    Kind = "Pod"
	KindPlugin Kind = "Plugin"
	KindNode   Kind = "Node"
)

// Object names what an event is about. Pods have a namespace, name and
// UID; plugins a name; the node a name (may be empty).
type Object struct {
	Kind      Kind      `json:"kind"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name,omitempty"`
	UID       types.UID `json:"uid,omitempty"`
}

// Event is one entry of the ring.
type Event struct {
	// Seq identifies the entry; it grows with each new entry and is kept
	// when a repeat is folded in.
	Seq     uint64 `json:"seq"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Object  Object `json:"object"`
	// Count is how many times the event happened in a row.
	Count     int       `json:"count"`
	FirstTime time.Time `json:"firstTime"`
	LastTime  time.Time `json:"lastTime"`
}

// Filter selects events for List. Zero fields match everything.
type Filter struct {
	Kind      Kind
	Namespace string
	Name      string
	UID       types.UID
	// Since keeps events whose LastTime is not before it.
	Since time.Time
}

func (f Filter) match(e *Event) bool {
	o := e.Object
	return (f.Kind == "" || f.Kind == o.Kind) &&
		(f.Namespace == "" || f.Namespace == o.Namespace) &&
		(f.Name == "" || f.Name == o.Name) &&
		(f.UID == "" || f.UID == o.UID) &&
		(f.Since.IsZero() || !e.LastTime.Before(f.Since))
}
