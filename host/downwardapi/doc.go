// Package downwardapi owns the values of the downward API: what a pod's
// fieldRef and resourceFieldRef selectors resolve to, in a downwardAPI
// volume item (projected or not) and in a container's env. The values are
// the kubelet's: labels and annotations one key="value" a line in key
// order, resource quantities divided by the divisor and rounded up, and a
// container's unset cpu, memory or ephemeral-storage limit taken as the
// node's allocatable.
//
// It computes only; the node's allocatable and addresses are given, and
// which selectors a pod may use is sources/podvalidate's to check (an
// unknown one here is an error). The host's volume package
// (host/volumemanager/apivolumes) and the runtime manager (env) import it;
// it imports only k8s.io types.
package downwardapi
