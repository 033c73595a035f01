// Command runtime-containerd is the podhost runtime plugin for containerd.
// It serves podhost.runtime.v1.Runtime by calling containerd's CRI API
// (k8s.io/cri-api, runtime v1) on the configured unix socket: sandboxes,
// containers and images map one to one onto CRI calls, CRI errors are
// classified once into the contract's codes (errors.go, server.go), and the
// Events stream ("runtime.events") follows containerd's own event service
// on its main socket, since containerd 1.6 has no CRI event API: each task
// event makes the plugin look its object up in CRI (ctrdevents.go,
// watch.go, observe.go), and a list diff (diff.go) resyncs when the
// subscription starts or comes back after containerd restarted.
// ListStats (stats.go) comes from CRI's ListContainerStats; a sandbox's
// CPU and memory are its containers' sums, since containerd 1.6's
// ListPodSandboxStats fails for sandboxes without a cgroup parent (podhost
// sets none but the pod cgroup), and sandbox network counters are not
// reported. In-place resize: UpdateContainerResources is CRI's
// (resources.go); a pod cgroup (SandboxConfig.pod_cgroup) is made by the
// plugin itself in the kubelet's cgroupfs layout, on cgroup v1 or v2, and
// given to CRI as the sandbox's cgroup parent, its limits rewritten by
// UpdateSandboxResources and the cgroup removed after RemoveSandbox
// (podcgroup.go). Only containerd's cgroupfs driver is supported: with
// SystemdCgroup a pod cgroup is refused (INVALID_ARGUMENT).
//
// Layout: main.go serves, server.go and convert.go translate the proto,
// the other files are the logic (criRuntime), which knows nothing of the
// proto. Production code does not import this package.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
