// Package pluginregistration owns the host's side of the kubelet's plugin
// registration API (k8s.io/kubelet/pkg/apis/pluginregistration/v1): it
// watches the registration directory (by default
// <rootDir>/plugins_registry, config csiRegistrationDir) for the sockets
// that a CSI driver's node-driver-registrar creates, and for each new
// socket calls GetInfo, validates the answer, hands a valid CSI driver to
// its Handler and tells the registrar the outcome with
// NotifyRegistrationStatus; a socket removed deregisters its driver.
//
// What it accepts: type CSIPlugin (other types are refused naming the
// field type), a non-empty name, a supported_versions entry of CSI major
// version 1, and an endpoint that is an absolute path or unix:// address
// (empty: the registration socket itself, as the kubelet does). Every
// refusal names the field, goes to the registrar, the host log and a Node
// event (CSIDriverRegistrationFailed); a registrar that does not answer
// within Timeout is refused likewise and never blocks the host for
// longer. A registration that failed for a reason that may pass (the
// registrar did not answer, the Handler refused: the volume plugin was
// down) is tried again on the same socket with the kubelet's back-off,
// 0.5 s doubling to about 2 min, until it succeeds or the socket goes; an
// answer that fails validation is not (the event says which). Sockets are handled one at a time, in the order they appear; a
// name registered again from another socket moves to the newer socket,
// and removing the older socket then leaves it registered. Files whose
// names start with "." and subdirectories are ignored. Resync registers
// every registered driver again (after the plugin that serves them
// restarted and lost them).
//
// What the Handler does with a driver (route it to volume-csi through the
// volume contract, keep the CSINode object in Kubernetes mode) is the
// caller's: host/node wires it. It imports no other host package.
package pluginregistration
