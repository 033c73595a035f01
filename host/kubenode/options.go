package kubenode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
)

// KubeVersion is the Kubernetes version whose node API this package
// speaks, the default of Options.KubeletVersion.
const KubeVersion = "v1.37.2"

// The kubelet's defaults, which are this package's.
const (
	DefaultLeaseDuration   = 40 * time.Second
	DefaultStatusFrequency = 10 * time.Second
	DefaultReportFrequency = 5 * time.Minute
	DefaultMaxPods         = 110
)

// Options say which node the Agent keeps and how. Client, NodeName and
// RuntimeVersion are required; so is RuntimeReady unless Health is set, and
// RootDir unless Health is set and Capacity has ephemeral-storage.
type Options struct {
	// Client talks to the API server with the node's own identity
	// (system:node:NodeName).
	Client kubernetes.Interface
	// NodeName is the Node's name: a DNS subdomain, as in the node's
	// credentials.
	NodeName string
	// Addresses are status.addresses (InternalIP, Hostname, …). Empty: one
	// Hostname address, NodeName.
	Addresses []v1.NodeAddress
	// DaemonPort is status.daemonEndpoints.kubeletEndpoint.Port, where the
	// node serves the kubelet's API (logs); 0 while it serves none.
	DaemonPort int32
	// DeclaredFeatures are status.declaredFeatures, the features the
	// node says it serves: ExtendWebSocketsToKubelet when its
	// daemon endpoint serves WebSocket exec, attach and port-forward, so
	// that the API server passes those through instead of translating them
	// to SPDY.
	DeclaredFeatures []string
	// Capacity and Allocatable are what the node offers. Nil Capacity is
	// measured from the machine: cpu (the CPU count), memory (MemTotal of
	// /proc/meminfo), ephemeral-storage (the file system of RootDir) and
	// pods (MaxPods). Nil Allocatable is Capacity less the eviction
	// thresholds (memory less Thresholds.MemoryAvailable,
	// ephemeral-storage less Thresholds.DiskAvailablePercent of it).
	Capacity, Allocatable v1.ResourceList
	// MaxPods is the pods capacity when Capacity is measured; 0: 110.
	MaxPods int64
	// RootDir is the host's root directory: its file system is the node's
	// ephemeral storage and what DiskPressure watches. Absolute.
	RootDir string
	// KubeletVersion is status.nodeInfo.kubeletVersion, a semantic
	// version ("v1.37.2+podhost.1.4.0"); empty: KubeVersion.
	KubeletVersion string
	// RuntimeVersion returns status.nodeInfo.containerRuntimeVersion, as
	// "containerd://1.7.20": the runtime plugin's name and version. An
	// error keeps the last value.
	RuntimeVersion func(ctx context.Context) (string, error)
	// RuntimeReady returns nil when the runtime plugin can run pods, or
	// why not; the reason goes into the Ready condition's message.
	RuntimeReady func(ctx context.Context) error
	// Health overrides the default health, which is RuntimeReady and the
	// machine's memory, disk (RootDir) and PID pressure measured against
	// Thresholds.
	Health func(ctx context.Context) Health
	// Pressure, when set, says the memory and disk pressure of the default
	// health instead of the machine measured against Thresholds: the
	// eviction manager's conditions (host/eviction), which it keeps for
	// its transition period.
	Pressure func() (memory, disk bool)
	// Thresholds say when the machine is under pressure; zero fields take
	// the defaults.
	Thresholds Thresholds
	// Labels are set on the Node besides the ones a kubelet sets
	// (kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch and
	// their beta forms), which they may override. Only labels a node may
	// set on itself: none in the node-restriction.kubernetes.io namespace,
	// and in the kubernetes.io and k8s.io namespaces only the kubelet's own
	// and those under kubelet.kubernetes.io/ and node.kubernetes.io/.
	Labels map[string]string
	// LeaseDuration is the Lease's leaseDurationSeconds; 0: 40 s.
	LeaseDuration time.Duration
	// RenewInterval is how often the Lease is renewed; 0: a quarter of
	// LeaseDuration.
	RenewInterval time.Duration
	// StatusFrequency is how often the status is measured and, if it
	// changed, posted; 0: 10 s.
	StatusFrequency time.Duration
	// ReportFrequency is how often the status is posted when nothing
	// changed; 0: 5 min.
	ReportFrequency time.Duration
	// Clock drives every wait; nil: the real clock.
	Clock clock.WithTicker
	// Logger gets the agent's log lines (keys node, heartbeat, err, since,
	// failures); nil: none.
	Logger hclog.Logger
	// Registry gets the agent's metrics; nil: a private registry.
	Registry prometheus.Registerer
	// Recorder gets the events on the Node (events.go); nil: they are
	// written to the API server through Client while Run runs.
	Recorder record.EventRecorder
	// VolumesInUse returns status.volumesInUse: the unique names of the
	// volumes the node has, may have or is about to have staged
	// ("kubernetes.io/csi/<driver>^<handle>"), which the attach/detach
	// controller must not detach, sorted. known is false until the node
	// can tell (its volume state rebuilt after a start): the Node's list
	// is then kept as it is. Nil: the field is never set.
	VolumesInUse func() (names []v1.UniqueVolumeName, known bool)
	// VolumesReported is called with status.volumesInUse of every Node
	// the API server accepted from the agent (registered or patched):
	// what the attach/detach controller can now see in use, as the
	// kubelet's MarkVolumesAsReportedInUse. Nil: not called.
	VolumesReported func(names []v1.UniqueVolumeName)
}

// Thresholds say when the machine is under pressure, as the kubelet's
// hard eviction thresholds do.
type Thresholds struct {
	// MemoryAvailable: memory pressure below this much MemAvailable;
	// zero: 100Mi.
	MemoryAvailable resource.Quantity
	// DiskAvailablePercent: disk pressure below this share of RootDir's
	// file system free; zero: 10.
	DiskAvailablePercent float64
	// PIDAvailablePercent: PID pressure below this share of the PID limit
	// free; zero: 5.
	PIDAvailablePercent float64
}

// Health is what the Ready and pressure conditions say.
type Health struct {
	// NotReady lists why the node cannot run pods; empty means Ready.
	NotReady []string
	// MemoryPressure, DiskPressure and PIDPressure are the node's
	// pressure signals.
	MemoryPressure, DiskPressure, PIDPressure bool
}

// withDefaults validates o and fills in the defaults, naming the field of
// each problem.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if o.Client == nil {
		bad("Client", "required")
	}
	if o.NodeName == "" {
		bad("NodeName", "required")
	} else if msgs := validation.IsDNS1123Subdomain(o.NodeName); len(msgs) > 0 {
		bad("NodeName", "%q is not a DNS subdomain: %s", o.NodeName, strings.Join(msgs, "; "))
	}
	if len(o.Addresses) == 0 && o.NodeName != "" {
		o.Addresses = []v1.NodeAddress{{Type: v1.NodeHostName, Address: o.NodeName}}
	}
	for i, a := range o.Addresses {
		if err := checkAddress(a); err != nil {
			bad(fmt.Sprintf("Addresses[%d]", i), "%v", err)
		}
	}
	if h := hostnameOf(o.Addresses, o.NodeName); h != "" && len(validation.IsValidLabelValue(h)) > 0 {
		bad("Addresses", "hostname %q cannot be the value of label %s: %s", h, v1.LabelHostname, strings.Join(validation.IsValidLabelValue(h), "; "))
	}
	if o.DaemonPort < 0 || o.DaemonPort > 65535 {
		bad("DaemonPort", "%d is not a port", o.DaemonPort)
	}
	if o.RootDir != "" && !filepath.IsAbs(o.RootDir) {
		bad("RootDir", "%q is not absolute", o.RootDir)
	}
	_, hasStorage := o.Capacity[v1.ResourceEphemeralStorage]
	if o.RootDir == "" && (o.Health == nil || !hasStorage) {
		bad("RootDir", "required to measure the ephemeral storage and disk pressure")
	}
	if o.MaxPods < 0 {
		bad("MaxPods", "%d is negative", o.MaxPods)
	} else if o.MaxPods == 0 {
		o.MaxPods = DefaultMaxPods
	}
	if o.KubeletVersion == "" {
		o.KubeletVersion = KubeVersion
	} else if _, err := version.ParseSemantic(o.KubeletVersion); err != nil {
		bad("KubeletVersion", "%v", err)
	}
	if o.RuntimeVersion == nil {
		bad("RuntimeVersion", "required")
	}
	if o.RuntimeReady == nil && o.Health == nil {
		bad("RuntimeReady", "required unless Health is set")
	}
	errs = append(errs, o.Thresholds.defaults(&o.Thresholds)...)
	for k := range o.Labels {
		if err := checkLabel(k, o.Labels[k]); err != nil {
			bad(fmt.Sprintf("Labels[%q]", k), "%v", err)
		}
	}
	errs = append(errs, o.intervals()...)
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("kubenode options: %w", errors.Join(errs...))
	}
	return o, nil
}

// intervals fills in the timing defaults and checks that they fit: the
// Lease is renewed well within its duration.
func (o *Options) intervals() []error {
	var errs []error
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"LeaseDuration", &o.LeaseDuration, DefaultLeaseDuration},
		{"RenewInterval", &o.RenewInterval, 0},
		{"StatusFrequency", &o.StatusFrequency, DefaultStatusFrequency},
		{"ReportFrequency", &o.ReportFrequency, DefaultReportFrequency},
	} {
		switch {
		case *d.v < 0:
			errs = append(errs, fmt.Errorf("%s: %v is negative", d.name, *d.v))
		case *d.v == 0:
			*d.v = d.def
		}
	}
	if o.LeaseDuration > 0 && o.LeaseDuration%time.Second != 0 {
		errs = append(errs, fmt.Errorf("LeaseDuration: %v is not whole seconds", o.LeaseDuration))
	}
	if o.RenewInterval == 0 {
		o.RenewInterval = o.LeaseDuration / 4
	}
	if o.RenewInterval >= o.LeaseDuration {
		errs = append(errs, fmt.Errorf("RenewInterval: %v is not shorter than LeaseDuration %v", o.RenewInterval, o.LeaseDuration))
	}
	if o.ReportFrequency < o.StatusFrequency {
		errs = append(errs, fmt.Errorf("ReportFrequency: %v is shorter than StatusFrequency %v", o.ReportFrequency, o.StatusFrequency))
	}
	return errs
}

func (t Thresholds) defaults(out *Thresholds) []error {
	var errs []error
	if t.MemoryAvailable.Sign() < 0 {
		errs = append(errs, fmt.Errorf("Thresholds.MemoryAvailable: %s is negative", t.MemoryAvailable.String()))
	} else if t.MemoryAvailable.IsZero() {
		t.MemoryAvailable = resource.MustParse("100Mi")
	}
	for _, p := range []struct {
		name string
		v    *float64
		def  float64
	}{{"DiskAvailablePercent", &t.DiskAvailablePercent, 10}, {"PIDAvailablePercent", &t.PIDAvailablePercent, 5}} {
		switch {
		case *p.v < 0 || *p.v >= 100:
			errs = append(errs, fmt.Errorf("%s: %v is not in [0, 100)", "Thresholds."+p.name, *p.v))
		case *p.v == 0:
			*p.v = p.def
		}
	}
	*out = t
	return errs
}

func checkAddress(a v1.NodeAddress) error {
	switch a.Type {
	case v1.NodeInternalIP, v1.NodeExternalIP:
		if net.ParseIP(a.Address) == nil {
			return fmt.Errorf("%s %q is not an IP address", a.Type, a.Address)
		}
	case v1.NodeHostName, v1.NodeInternalDNS, v1.NodeExternalDNS:
		if msgs := validation.IsDNS1123Subdomain(a.Address); len(msgs) > 0 {
			return fmt.Errorf("%s %q is not a DNS name: %s", a.Type, a.Address, strings.Join(msgs, "; "))
		}
	default:
		return fmt.Errorf("unknown address type %q", a.Type)
	}
	return nil
}
