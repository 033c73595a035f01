// Package prober owns the probe and hook executors of the host: it runs
// one liveness, readiness or startup probe (exec through the runtime's
// ExecSync, httpGet, tcpSocket, grpc with the standard health-checking
// protocol) and one postStart or preStop hook (exec, httpGet, sleep)
// against a container, for host-network pods and for pods with their own
// network namespace (which it reaches at the pod's IP). When and how often
// to probe, thresholds and what a result means are lifecycle's
// (lifecycle.ProbeManager); Runner implements lifecycle.ProbeRunner and
// runtimemanager's HookRunner.
//
// host/node imports it to wire the prober; it imports lifecycle and
// host/runtimemanager.
package prober
