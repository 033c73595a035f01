package localapi

import (
	"context"
	"io"

	"github.com/prometheus/client_golang/prometheus"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podhost/podhost/host/streamproxy"
)

// Views are what the server reads its answers from. Plugins and Ready are
// required; an endpoint whose view is nil answers 501 Not Implemented.
type Views struct {
	// Plugins lists the supervised plugins.
	Plugins func() []PluginInfo
	// Ready reports whether the host is ready (required plugins ready and
	// every source synced), and why not.
	Ready func() (bool, string)
	// Pods serves /v1/pods.
	Pods Pods
	// Events serves /v1/events.
	Events Events
	// Node gives the host's part of GET /v1/node (hostname, version, start
	// time); the server adds the plugin and pod counts and readiness. When
	// nil, the hostname is os.Hostname's and the rest is empty.
	Node func(ctx context.Context) NodeInfo
	// ConfigMaps and Secrets serve GET /v1/configmaps and /v1/secrets:
	// the sources' objects, sorted by namespace/name, without values.
	ConfigMaps func() []ObjectInfo
	Secrets    func() []ObjectInfo
	// Objects serves POST /v1/configmaps and /v1/secrets and DELETE
	// /v1/configmaps/{ns}/{name} and /v1/secrets/{ns}/{name}.
	Objects Objects
	// Shutdown serves POST /v1/node/shutdown.
	Shutdown ShutdownFunc
	// Metrics is served as Prometheus text on /metrics.
	Metrics prometheus.Gatherer
	// Streams serves exec, attach and port-forward (host/streamproxy).
	Streams streamproxy.Streams
	// Stats serves GET /v1/stats/summary: the node's last reading, which
	// the host gathers on its own period (a request never asks the
	// runtime).
	Stats func() (statsapi.Summary, error)
}

// Pods is the host's pod API. Errors are mapped to answers by what they
// wrap: ErrNotFound 404, ErrConflict 409, ErrUnavailable 503, one or more
// *field.Error (k8s.io/apimachinery validation) 422 with every field path,
// anything else 500. Every method must be safe for concurrent use.
type Pods interface {
	// Apply creates or updates the one pod in body (JSON or YAML). where
	// names the request for errors and events.
	Apply(ctx context.Context, where string, body []byte) (ApplyResult, error)
	// Delete marks the pod for deletion, or with Force removes it at once.
	Delete(ctx context.Context, namespace, name string, opts DeleteOptions) (PodItem, error)
	// Get returns one pod, with its status.
	Get(ctx context.Context, namespace, name string) (PodItem, error)
	// List returns every pod the host knows, rejected ones included.
	List(ctx context.Context) ([]PodItem, error)
	// Watch reports every change from the call on, until ctx is done; then
	// the channel is closed. The server sends the current pods first
	// itself. A watcher that falls behind may lose changes, never block
	// the host.
	Watch(ctx context.Context) (<-chan PodChange, error)
	// Logs writes the container's log to w, following it with Follow
	// until ctx is done or the container exits. An error returned before
	// anything was written becomes the answer's status.
	Logs(ctx context.Context, namespace, name string, opts LogOptions, w io.Writer) error
}

// Objects are the ConfigMaps and Secrets of the local API (kind
// "ConfigMap" or "Secret"), which pods that are not the API server's
// read. Errors map as Pods' do; no answer carries a value.
type Objects interface {
	// Apply creates or replaces the one object of kind in body (JSON or
	// YAML) and returns what it is now and the op.
	Apply(ctx context.Context, kind, where string, body []byte) (ObjectInfo, string, error)
	// Delete removes it.
	Delete(ctx context.Context, kind, namespace, name string) error
}

// Events is the host's event log.
type Events interface {
	// List returns the retained events that pass the filter, oldest first.
	List(ctx context.Context, f EventFilter) ([]Event, error)
	// Watch reports every event from the call on that passes the filter,
	// until ctx is done; then the channel is closed.
	Watch(ctx context.Context, f EventFilter) (<-chan Event, error)
}
