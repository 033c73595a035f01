package runtimemanager

import (
	"errors"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Options configure a Manager. Runtime, Clock and LogRoot are required.
type Options struct {
	// Runtime is the runtime plugin's client; the host passes
	// host.Manager.Runtime(name), which always reaches the plugin's
	// current instance.
	Runtime runtimev1.RuntimeClient
	// Plugin is the runtime plugin's name, for logs.
	Plugin string
	// Clock is the source of time of the crash back-off.
	Clock lifecycle.Clock
	// LogRoot is the directory under which pod log directories are made:
	// <LogRoot>/pods/<namespace>_<name>_<uid>/. The host passes its root dir.
	LogRoot string
	// Logger may be nil (no logs).
	Logger hclog.Logger
	// Reasons, when set, receives the waiting reason of containers that
	// could not start (CrashLoopBackOff, ErrImagePull, CreateContainerError,
	// …) and loses it once they start. The host passes the same cache to
	// lifecycle.Syncer so the reasons show in the pod status.
	Reasons *lifecycle.ReasonCache
	// Mounts returns the mounts of a container (the volume manager's host
	// paths); env is the container's env, resolved, for its volumeMounts'
	// subPathExpr. Nil means no mounts.
	Mounts func(pod *v1.Pod, c *v1.Container, env map[string]string) ([]*runtimev1.Mount, error)
	// Devices returns the devices of a container (its volumeDevices, the
	// volume manager's mapped block volumes). Nil means none.
	Devices func(pod *v1.Pod, c *v1.Container) ([]*runtimev1.Device, error)
	// ClusterDNS and ClusterDomain configure ClusterFirst DNS; without
	// ClusterDNS, ClusterFirst pods get the node's DNS.
	ClusterDNS    []string
	ClusterDomain string
	// NodeResolvConf is the node's DNS (ParseResolvConf of
	// /etc/resolv.conf) for the Default policy; nil leaves the runtime's
	// default.
	NodeResolvConf *ResolvConf
	// NodeMemoryBytes scales the OOM score of Burstable containers; 0
	// gives them 999.
	NodeMemoryBytes int64
	// Recorder, when set, receives the kubelet's events of each step:
	// Pulled, Created, Started, Killing, BackOff and Failed. Nil records
	// none.
	Recorder lifecycle.Recorder
	// Hooks, when set, runs the containers' postStart and preStop hooks
	// (hooks.go). Nil runs none.
	Hooks HookRunner
	// Probes, when set, tells whether a sidecar's startup probe
	// succeeded, which the next init container waits for; the host
	// passes the probe manager's results. Nil: a running sidecar has
	// started.
	Probes lifecycle.ProbeView
	// EnvObjects says where the ConfigMaps and Secrets a pod's env names
	// are read: the API server for its pods (wrapped in LastGood), the
	// sources' objects for the others. Nil, or a nil answer: nowhere, and
	// such env fails the container's creation.
	EnvObjects func(pod *v1.Pod) EnvObjects
	// HostIPs are the node's addresses, primary first: env status.hostIP
	// and hostIPs, and status.podIP of a host-network pod.
	HostIPs []string
	// Allocatable returns the node's allocatable resources, which a
	// container's unset limit takes in an env resourceFieldRef. Nil: such
	// a variable fails the container's config.
	Allocatable func() (v1.ResourceList, error)
	// SeccompProfileRoot is the directory of the node's seccomp profiles:
	// a Localhost profile is a file under it (admission checks that it
	// exists).
	SeccompProfileRoot string
}

// Manager implements lifecycle.Runtime over a runtime plugin. It keeps no
// state but the crash back-off and the containers' start and exit facts
// already read (knownDetails): everything else is read from the runtime
// on every call. Its methods are safe for concurrent use; like the
// lifecycle contract says, the lifecycle's calls for one pod are not
// concurrent, and RemovePod, which the host calls from a goroutine, waits
// for a SyncPod of the same UID (and the other way round).
type Manager struct {
	opts    Options
	rt      runtimev1.RuntimeClient
	clock   lifecycle.Clock
	logRoot string
	log     hclog.Logger
	backoff backOffs
	locks   podLocks
	// cutStarts are the containers whose start the plugin's death cut
	// short.
	cutStarts cutStarts
	// logScan remembers the logs rotation found idle.
	logScan logScan
	// details are the containers' start and exit facts already read.
	details knownDetails
	// stops are the container stops in flight, which teardowns yield to.
	stops stopsInFlight
	// resized are the resources actuated by updates in place.
	resized resized
	// resizeErrors are the pods' last failed resizes.
	resizeErrors resizeErrors
}

// New returns a Manager.
func New(opts Options) (*Manager, error) {
	switch {
	case opts.Runtime == nil:
		return nil, errors.New("runtime manager: no runtime client")
	case opts.Clock == nil:
		return nil, errors.New("runtime manager: no clock")
	case opts.LogRoot == "":
		return nil, errors.New("runtime manager: no log root")
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if opts.Plugin != "" {
		log = log.With("plugin", opts.Plugin)
	}
	return &Manager{opts: opts, rt: opts.Runtime, clock: opts.Clock, logRoot: opts.LogRoot, log: log}, nil
}

var _ lifecycle.Runtime = (*Manager)(nil)
