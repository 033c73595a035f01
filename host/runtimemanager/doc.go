// Package runtimemanager owns the pod's containers on the node: it is the
// host's implementation of lifecycle.Runtime on top of a runtime plugin
// (proto/runtime/v1). It creates the sandbox (and recreates it when it
// dies), runs init containers in order, keeps sidecars (init containers
// with restartPolicy Always) running beside the app containers, the next
// init container waiting for a sidecar's startup probe (Options.Probes),
// starts and restarts app containers
// according to the restart policy with CrashLoopBackOff, starts ephemeral
// containers once (in their target's PID namespace when they name one),
// ends a run of the pod when a container exits under a
// RestartAllContainers rule (stops the rest, without preStop, and starts
// the pod again from its first init container in the same sandbox,
// restartall.go),
// maps the container
// spec (command, args, env, working dir, resources, host namespaces, DNS,
// the pod's and the container's securityContext merged as the kubelet
// merges them, security.go) onto the contract, verifies runAsNonRoot
// against the image's user before it creates a container, pulls images
// with the credentials of the pod's imagePullSecrets that match the
// image's registry (read where its env's Secrets are, matched by
// host/registryauth; pullsecrets.go), writes the pod's
// /etc/hosts as the kubelet manages it (hostname or hostnameOverride, FQDN, hostAliases,
// etchosts.go) and gives the sandbox the hostname the kubelet gives it
// (the FQDN with setHostnameAsFQDN, sandbox.go), stops containers with the pod's grace period, and
// removes what a finished pod left behind. A pod's teardown yields to the
// container stops other pods have in flight (stopsfirst.go).
//
// The runtime is the only store: every sandbox and container carries the
// labels and annotations of labels.go (pod UID, namespace, name, container
// name, attempt, spec hash, restart count, grace period), so a restarted
// host rebuilds its view from ListSandboxes and ListContainers and adopts
// running containers without restarting them. SyncPod lists before it
// creates anything, so a call that failed in an uncertain way (a timeout,
// the plugin exiting) is never blindly repeated: the next sync finds what
// the call did. A container whose status cannot be read is unknown, never
// exited 0; a StartContainer cut short by the plugin's death is no crash
// (startcut.go). SyncPod and RemovePod of one UID never overlap
// (podlock.go), so removing an old incarnation of a static pod spares a
// new one with the same UID.
//
// What to do is decided by a pure function (computeActions in actions.go)
// from the pod spec, the runtime's view and the back-off state; the Manager
// only performs the actions. The CRI log files the runtime writes live
// under <root>/pods/<namespace>_<name>_<uid>/<container>/<restartCount>.log;
// package crilog reads them. A container's termination message is the
// host's business, as under the kubelet: before creating a container it
// makes an empty file, mode 0666 so that any container user can write it,
// at <root>/pods/<uid>/containers/<container>/<restartCount> (the pod UID
// and the container name checked to be plain file names) and bind-mounts
// it at the spec's terminationMessagePath; PodStatus reads an exited
// container's message from it (its last 4096 bytes), or, under
// FallbackToLogsOnError with an empty file and a non-zero exit, from the
// end of its log (the last 80 entries, at most 2048 bytes), and adds it
// to the runtime's message (termination.go). The runtime contract stays
// as it is: the files are the host's, the policy rides on a container
// annotation, and lifecycle only sees the message. The files go with
// their container (GarbageCollect) or pod (RemovePod). RotateLogs rotates them as the kubelet's
// container log manager does (logrotate.go). ExecURL, AttachURL and
// PortForwardURL (streams.go) find a pod's running container or ready
// sandbox and ask the runtime for its streaming URL, for the node's
// daemon endpoint. ListStats (stats.go) passes the runtime's stats on to
// host/nodestats.
//
// host/node, the running agent, imports it; so do bench/podstart and the
// e2e tests, for the labels they look runtime objects up by. It imports
// lifecycle (for the contract it implements), host/supervisor (for
// ErrPluginExited), sources/podvalidate (sysctl names), host/expansion
// ($(VAR) in command, args and env) and the generated runtime protos;
// lifecycle never
// imports it.
package runtimemanager
