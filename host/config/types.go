package config

import (
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podhost/podhost/pluginapi"
)

// The apiVersion and kind a host config must declare.
const (
	APIVersion = "podhost.dev/v1alpha1"
	Kind       = "HostConfig"
)

// Defaults applied by Parse to fields left out of the document.
const (
	DefaultLogLevel          = "info"
	DefaultStartTimeout      = 10 * time.Second
	DefaultProbeInterval     = 10 * time.Second
	DefaultBackoffInitial    = time.Second
	DefaultBackoffMax        = time.Minute
	DefaultBackoffResetAfter = 10 * time.Minute
	// DefaultShutdownGracePeriod bounds `podhost node shutdown`.
	DefaultShutdownGracePeriod = 30 * time.Second
	// DefaultSocketName is the API socket's file name under rootDir.
	DefaultSocketName = "host.sock"
)

// LogLevels lists the accepted values of logLevel, least severe first.
var LogLevels = []string{"trace", "debug", "info", "warn", "error"}

// HostConfig is the host's configuration document. After Parse, defaults are
// filled in: LogLevel, every Supervision duration, API.Socket and each
// plugin's Required.
type HostConfig struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	// RootDir holds the host's state (its database, the default API socket).
	RootDir string `yaml:"rootDir"`
	// PluginDir is where relative plugin paths are resolved. Set it before
	// Validate or PluginSpecs to point the same document at other binaries.
	PluginDir string `yaml:"pluginDir"`
	// ManifestDir, when set, holds static pod manifests.
	ManifestDir string `yaml:"manifestDir"`
	// NodeName is this node's name: static pods get it appended and, in
	// Kubernetes mode, it is the Node's name and the spec.nodeName of the
	// pods it runs. cmd/host uses the machine's host name, lower-cased,
	// when it is left out.
	NodeName string `yaml:"nodeName"`
	// Kubernetes, when set, makes the host a node of a Kubernetes API
	// server (see Kubernetes).
	Kubernetes *Kubernetes `yaml:"kubernetes"`
	// LogLevel is one of LogLevels.
	LogLevel    string         `yaml:"logLevel"`
	Plugins     []PluginConfig `yaml:"plugins"`
	Supervision Supervision    `yaml:"supervision"`
	API         API            `yaml:"api"`
	// ShutdownGracePeriod is the most a node shutdown (`podhost node
	// shutdown`) gives the pods to stop; each pod gets its own grace
	// period capped at this. 0s kills at once.
	ShutdownGracePeriod time.Duration `yaml:"shutdownGracePeriod"`
	// LogFormat is one of LogFormats: how the host writes its own log.
	LogFormat string `yaml:"logFormat"`
	// ContainerLogMaxSize is the size above which a running container's
	// log file is rotated (a quantity such as "10Mi").
	ContainerLogMaxSize resource.Quantity `yaml:"containerLogMaxSize"`
	// ContainerLogMaxFiles is the most log files a container keeps, the one
	// being written included; at least 2.
	ContainerLogMaxFiles int `yaml:"containerLogMaxFiles"`
	// ContainerLogMonitorInterval is how often the log files of running
	// containers are checked for rotation.
	ContainerLogMonitorInterval time.Duration `yaml:"containerLogMonitorInterval"`
	// AllowedUnsafeSysctls are the sysctls beyond the kubelet's safe set
	// that pods may set: names, or prefixes ending in "*" (net.core.*).
	// Only namespaced sysctls (net.*, kernel.shm*, kernel.msg*,
	// kernel.sem, fs.mqueue.*) can be allowed.
	AllowedUnsafeSysctls []string `yaml:"allowedUnsafeSysctls"`
	// SeccompProfileRoot is the directory of Localhost seccomp profiles
	// (a pod's localhostProfile is a path under it); empty:
	// <rootDir>/seccomp.
	SeccompProfileRoot string `yaml:"seccompProfileRoot"`
	// PluginRegistrationDir is where CSI drivers register, as with the
	// kubelet: node-driver-registrar puts its socket there
	// (host/pluginregistration); empty: <rootDir>/plugins_registry.
	PluginRegistrationDir string `yaml:"pluginRegistrationDir"`
	// ClusterDNS are the nameservers of pods with dnsPolicy ClusterFirst
	// (the cluster's DNS service, as the kubelet's clusterDNS); empty:
	// those pods get the node's DNS, as the kubelet without clusterDNS.
	ClusterDNS []string `yaml:"clusterDNS"`
	// ClusterDomain is the cluster's DNS domain (cluster.local): the
	// search path of ClusterFirst pods and the FQDN of pods with a
	// subdomain in their /etc/hosts.
	ClusterDomain string `yaml:"clusterDomain"`
	// EvictionHard are the hard eviction thresholds of node-pressure
	// eviction by signal, as the kubelet's evictionHard: a quantity
	// ("memory.available": "500Mi") or a percentage of the capacity
	// ("nodefs.available": "15%"). The signals are EvictionSignals; a
	// signal left out keeps the kubelet's default (memory.available 100Mi,
	// nodefs.available 10%, nodefs.inodesFree 5%, imagefs.available 15%),
	// "0%" turns it off.
	EvictionHard map[string]string `yaml:"evictionHard"`
	// EvictionPressureTransitionPeriod is how long a pressure condition
	// stays after its signal recovered; empty: 5m.
	EvictionPressureTransitionPeriod time.Duration `yaml:"evictionPressureTransitionPeriod"`

	meta *meta // where each field came from, for errors found after decoding
}

// PluginConfig is one entry of plugins, as written. PluginSpecs resolves it
// into a Plugin.
type PluginConfig struct {
	Name string         `yaml:"name"`
	Kind pluginapi.Kind `yaml:"kind"`
	// Path is the plugin binary, absolute or relative to PluginDir.
	Path string `yaml:"path"`
	// SHA256, when set, pins the binary's checksum (64 hex digits).
	SHA256 string `yaml:"sha256"`
	// Required means the host does not run without this plugin. Parse sets
	// it to true when the document leaves it out.
	Required *bool    `yaml:"required"`
	Args     []string `yaml:"args"`
	// Config is the entry's free-form config subtree as JSON; nil if absent.
	Config json.RawMessage `yaml:"config"`
}

// Supervision tunes how the host launches and watches its plugins.
type Supervision struct {
	// StartTimeout bounds a plugin's launch and handshake.
	StartTimeout time.Duration `yaml:"startTimeout"`
	// ProbeInterval is the time between health probes.
	ProbeInterval  time.Duration `yaml:"probeInterval"`
	RestartBackoff Backoff       `yaml:"restartBackoff"`
}

// Backoff is an exponential restart back-off.
type Backoff struct {
	Initial time.Duration `yaml:"initial"`
	Max     time.Duration `yaml:"max"`
	// ResetAfter is how long a plugin must stay up for the back-off to
	// start again from Initial.
	ResetAfter time.Duration `yaml:"resetAfter"`
}

// API configures the host's local API.
type API struct {
	// Socket is the unix socket path; default <rootDir>/host.sock.
	Socket string `yaml:"socket"`
	// TCPAddress, when set, also serves the API on this host:port; every
	// request must carry the bearer token read from TokenFile.
	TCPAddress string `yaml:"tcpAddress"`
	// TokenFile holds the bearer token of the TCP listener; it must not be
	// readable by group or others. Required with TCPAddress.
	TokenFile string `yaml:"tokenFile"`
}
