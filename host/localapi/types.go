package localapi

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// PluginInfo is one supervised plugin as `podhost plugins list` shows it.
type PluginInfo struct {
	Name         string    `json:"name"`
	Kind         string    `json:"kind"`
	Version      string    `json:"version,omitempty"`
	State        string    `json:"state"`
	Ready        bool      `json:"ready"`
	Required     bool      `json:"required"`
	Restarts     int       `json:"restarts"`
	LastError    string    `json:"lastError,omitempty"`
	Capabilities []string  `json:"capabilities,omitempty"`
	PID          int       `json:"pid,omitempty"`
	Since        time.Time `json:"since,omitzero"`
}

// PodItem is one pod as the host knows it: desired (from any source) or
// rejected, with its current status in Pod.Status.
type PodItem struct {
	// Pod is the pod with its status; never nil.
	Pod *v1.Pod
	// Source is the source that holds the pod: "file", "api", "apiserver".
	Source string
	// Error is the last validation or conflict error of the pod, naming
	// the file or request and the field; empty when there is none.
	Error string
}

// ChangeType says what happened to a pod in a watch.
type ChangeType string

// The changes a pod watch reports.
const (
	Added    ChangeType = "ADDED"
	Modified ChangeType = "MODIFIED"
	Deleted  ChangeType = "DELETED"
)

// PodChange is one change a Pods.Watch reports.
type PodChange struct {
	Type ChangeType
	Item PodItem
}

// PodSummary is a pod as `podhost pods list` shows it.
type PodSummary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	Source    string `json:"source,omitempty"`
	Phase     string `json:"phase"`
	// ReadyContainers of Containers are ready.
	ReadyContainers int       `json:"readyContainers"`
	Containers      int       `json:"containers"`
	Restarts        int32     `json:"restarts"`
	Created         time.Time `json:"created,omitzero"`
	// DeletionTimestamp is set once the pod was deleted; it is listed,
	// Terminating, until its containers are stopped.
	DeletionTimestamp *time.Time `json:"deletionTimestamp,omitempty"`
	// Reason says why the pod is not simply running: Terminating,
	// ContainerCreating, CrashLoopBackOff, Completed, …
	Reason string `json:"reason,omitempty"`
	// Error is the pod's last validation or conflict error.
	Error string `json:"error,omitempty"`
}

// PodDetail is one pod in full: GET /v1/pods/{ns}/{name}, DELETE, apply.
type PodDetail struct {
	Summary PodSummary `json:"summary"`
	Pod     *v1.Pod    `json:"pod"`
}

// PodEvent is one line of GET /v1/pods?watch=true.
type PodEvent struct {
	Type    ChangeType `json:"type"`
	Summary PodSummary `json:"summary"`
	Pod     *v1.Pod    `json:"pod"`
}

// ApplyResult is what Pods.Apply did.
type ApplyResult struct {
	// Op is "created", "updated" or "unchanged".
	Op   string
	Item PodItem
}

// ApplyResponse is the answer to POST /v1/pods.
type ApplyResponse struct {
	Op string `json:"op"`
	PodDetail
}

// DeleteOptions are the query parameters of DELETE /v1/pods/{ns}/{name}.
type DeleteOptions struct {
	// GracePeriod in seconds; the pod's own when nil.
	GracePeriod *int64
	// Force removes the pod from the desired set at once, with grace 0.
	Force bool
}

// LogOptions are the query parameters of GET /v1/pods/{ns}/{name}/logs.
type LogOptions struct {
	// Container is required when the pod has more than one.
	Container string
	// Follow streams new lines until the container exits or the client
	// goes away.
	Follow bool
	// TailLines, when set, starts that many lines from the end.
	TailLines *int64
	// Previous reads the log of the container's previous instance, as
	// kubectl logs --previous does.
	Previous bool
	// Timestamps starts every line with its time (RFC3339Nano) and a space.
	Timestamps bool
	// SinceTime, when set, leaves out the lines written before it.
	SinceTime *time.Time
	// SinceSeconds, when set, leaves out the lines older than that many
	// seconds. The client sends it; the server turns it into SinceTime by
	// its own clock, so that a Pods view sees only SinceTime.
	SinceSeconds *int64
}

// Event is one host event. Its JSON is that of host/events.Event.
type Event struct {
	Seq       uint64      `json:"seq"`
	Type      string      `json:"type"`
	Reason    string      `json:"reason"`
	Message   string      `json:"message"`
	Object    EventObject `json:"object"`
	Count     int         `json:"count"`
	FirstTime time.Time   `json:"firstTime"`
	LastTime  time.Time   `json:"lastTime"`
}

// EventObject names what an event is about.
type EventObject struct {
	// Kind is "Pod", "Plugin" or "Node".
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	UID       string `json:"uid,omitempty"`
}

// EventFilter selects events; zero fields match everything.
type EventFilter struct {
	Kind      string
	Namespace string
	Name      string
}

// Match reports whether the event passes the filter.
func (f EventFilter) Match(e Event) bool {
	o := e.Object
	return (f.Kind == "" || f.Kind == o.Kind) &&
		(f.Namespace == "" || f.Namespace == o.Namespace) &&
		(f.Name == "" || f.Name == o.Name)
}

// NodeInfo is GET /v1/node.
type NodeInfo struct {
	Hostname    string    `json:"hostname"`
	HostVersion string    `json:"hostVersion"`
	OS          string    `json:"os"`
	Arch        string    `json:"arch"`
	GoVersion   string    `json:"goVersion"`
	Started     time.Time `json:"started,omitzero"`
	// Ready and NotReady are what /readyz answers.
	Ready    bool           `json:"ready"`
	NotReady string         `json:"notReady,omitempty"`
	Plugins  PluginsSummary `json:"plugins"`
	// Pods counts the pods the host knows, rejected ones included.
	Pods int `json:"pods"`
}

// PluginsSummary counts the supervised plugins.
type PluginsSummary struct {
	Total    int      `json:"total"`
	Ready    int      `json:"ready"`
	NotReady []string `json:"notReady,omitempty"`
}

// FieldError is one problem with a request, at a field path when known.
type FieldError struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// ErrorBody is the JSON of every error answer.
type ErrorBody struct {
	Error  string       `json:"error"`
	Fields []FieldError `json:"fields,omitempty"`
}

// ObjectInfo is one ConfigMap or Secret of the host's sources as `podhost
// configmaps list` and `podhost secrets list` show it: its keys, never
// their values.
type ObjectInfo struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Keys      []string `json:"keys"`
	// Type is a Secret's type; empty for a ConfigMap.
	Type string `json:"type,omitempty"`
	// Source and Where say where it is defined ("file",
	// "/etc/podhost/pods/app.yaml: document 2").
	Source string `json:"source"`
	Where  string `json:"where"`
}

// ObjectApplyResponse answers POST /v1/configmaps and /v1/secrets.
type ObjectApplyResponse struct {
	Op string `json:"op"`
	ObjectInfo
}
