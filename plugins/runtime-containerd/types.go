package main

// The plain Go values the logic works with. server.go translates them to
// and from proto/runtime/v1; cri.go and its neighbours translate them to
// and from CRI. Times are Unix nanoseconds, 0 when the thing has not
// happened, as both CRI and the contract count them.

// SandboxState is whether a sandbox is running.
type SandboxState int

// The sandbox states; 0 means "any" in a filter.
const (
	SandboxReady SandboxState = iota + 1
	SandboxNotReady
)

// ContainerState is where a container is in its life.
type ContainerState int

// The container states; 0 means "any" in a filter.
const (
	ContainerCreated ContainerState = iota + 1
	ContainerRunning
	ContainerExited
	ContainerUnknown
)

// SandboxSpec is what RunSandbox is asked to make.
type SandboxSpec struct {
	Name, Namespace, UID string
	Attempt              uint32
	Hostname             string
	LogDirectory         string
	Labels, Annotations  map[string]string
	HostNetwork          bool
	HostPID, HostIPC     bool
	CgroupParent         string
	DNS                  *DNS // nil: the runtime's default
	RuntimeHandler       string
	SharePID             bool              // the containers share the sandbox's PID namespace
	Sysctls              map[string]string // namespaced sysctls of the sandbox
	Security             *Security         // nil: the runtime's defaults
	PodCgroup            *PodCgroup        // nil: none (podcgroup.go)
}

// DNS is a sandbox's resolver configuration.
type DNS struct {
	Servers, Searches, Options []string
}

// Sandbox is one pod sandbox as the runtime reports it.
type Sandbox struct {
	ID                   string
	Name, Namespace, UID string
	Attempt              uint32
	State                SandboxState
	CreatedAt            int64
	Labels, Annotations  map[string]string
	IP                   string // empty with the host network, and in lists
}

// ContainerSpec is what CreateContainer is asked to make.
type ContainerSpec struct {
	Name                string
	Attempt             uint32
	Image               string
	Command, Args       []string
	WorkingDir          string
	Env                 []EnvVar
	Mounts              []Mount
	Devices             []Device
	Labels, Annotations map[string]string
	LogPath             string // relative to the sandbox's log directory
	Stdin, TTY          bool
	Resources           *Resources // nil: none
	Security            *Security  // nil: the runtime's defaults
	TargetID            string     // a container whose PID namespace it joins; empty: the sandbox's rule
}

// EnvVar is one environment variable.
type EnvVar struct{ Key, Value string }

// Device is a host device node given to a container.
type Device struct {
	ContainerPath, HostPath, Permissions string
}

// Mount is a host path bound into a container.
type Mount struct {
	ContainerPath, HostPath string
	ReadOnly                bool
	Propagation             Propagation
}

// Propagation is a bind mount's propagation, as CRI's; 0 is private.
type Propagation int

// The propagation types, in the order of proto/runtime/v1's.
const (
	PropagationPrivate Propagation = iota
	// PropagationHostToContainer is rslave: the host's later mounts under
	// the host path show in the container.
	PropagationHostToContainer
	// PropagationBidirectional is rshared: mounts propagate both ways.
	PropagationBidirectional
)

// Resources are a container's Linux resources.
type Resources struct {
	CPUPeriod, CPUQuota, CPUShares int64
	MemoryLimitInBytes             int64
	OOMScoreAdj                    int64
}

// Container is one container as the runtime reports it. Lists fill in less
// than ContainerStatus: no times but CreatedAt, no exit code, no log path.
type Container struct {
	ID, SandboxID                    string
	Name                             string
	Attempt                          uint32
	State                            ContainerState
	Image, ImageRef                  string
	CreatedAt, StartedAt, FinishedAt int64
	ExitCode                         int32
	Reason, Message                  string
	Labels, Annotations              map[string]string
	LogPath                          string // absolute
}

// SandboxFilter selects sandboxes; zero fields match anything.
type SandboxFilter struct {
	ID     string
	State  SandboxState
	Labels map[string]string
}

// ContainerFilter selects containers; zero fields match anything.
type ContainerFilter struct {
	ID, SandboxID string
	State         ContainerState
	Labels        map[string]string
}

// PullPolicy says when EnsureImage pulls.
type PullPolicy int

// The pull policies; PullDefault takes the one the config names.
const (
	PullDefault PullPolicy = iota
	PullIfNotPresent
	PullAlways
	PullNever
)

// RegistryAuth is one set of credentials for an image's registry, as CRI's
// AuthConfig takes them.
type RegistryAuth struct {
	Username, Password           string
	IdentityToken, RegistryToken string
	ServerAddress                string
}

// Image is one image present in the runtime.
type Image struct {
	ID                    string
	RepoTags, RepoDigests []string
	Size                  uint64
	UID                   *int64 // the image's numeric user; nil: none or a name
	Username              string // the image's user by name
}

// Condition is one runtime condition, e.g. RuntimeReady.
type Condition struct {
	Type            string
	Status          bool
	Reason, Message string
}

// VersionInfo names the backend.
type VersionInfo struct {
	RuntimeName, RuntimeVersion, RuntimeAPIVersion string
}

// EventType is the kind of a state change.
type EventType int

// The event types, in the order of proto/runtime/v1's EventType.
const (
	EventContainerCreated EventType = iota + 1
	EventContainerStarted
	EventContainerExited
	EventContainerRemoved
	EventSandboxReady
	EventSandboxNotReady
	EventSandboxRemoved
)

// Event is one state change of a sandbox or container.
type Event struct {
	Type        EventType
	Time        int64
	SandboxID   string
	ContainerID string // empty for sandbox events
	Labels      map[string]string
}
