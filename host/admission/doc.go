// Package admission decides whether a pod may run on this node, as the
// kubelet's admit handlers do before a pod reaches a worker: the node's
// name, OS, labels (nodeSelector and required node affinity), NoExecute
// taints, host ports, resources (requests of the active pods against the
// allocatable), the runtime class, the volumes, the sysctls (the safe set
// and those the host config allows) and Localhost seccomp profiles. A pod that fails is
// rejected, never run: its status is phase Failed with the kubelet's reason
// (OutOfcpu, NodeAffinity, …) and a message that says what was missing.
//
// It is a plain function of its inputs (the node, the active pods, two
// lookups for runtime classes and volumes), so the rules are tested with
// tables. It uses k8s.io/component-helpers for pod requests, node affinity
// and toleration matching, the libraries the kubelet itself uses, so that
// podhost counts init containers, sidecars and overhead the same way.
//
// host/node imports it: it admits each new pod of the desired set and
// reports rejections through the status manager and the event ring.
package admission
