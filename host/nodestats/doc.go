// Package nodestats owns the node's resource numbers, in both modes: it
// gathers them in one goroutine at most every Period (10 s), keeps the
// last reading, and builds from it the kubelet's Summary API
// (k8s.io/kubelet/pkg/apis/stats/v1alpha1) and the series of its
// /metrics/resource endpoint that metrics-server reads. A request is
// answered from the kept reading and never asks the runtime.
//
// The numbers: pods and containers from the runtime plugin's ListStats
// (CPU time, memory working set, writable layer; a pod's CPU and memory
// are what the plugin reports for its sandbox); the node's CPU time from
// /proc/stat and its memory from /proc/meminfo (working set: used minus
// inactive file pages, as the kubelet reads the root cgroup); the
// filesystem of the root directory and of the runtime's image store by
// statfs; the claims' usage from host/volumemanager's StatsGatherer (its
// own cache). CPU rates (usageNanoCores) are the change since the previous
// reading.
//
// Only host/node imports it (and wires it); host/nodeserver and
// host/localapi (`podhost top`) serve what it builds through small
// interfaces, and host/eviction measures writable layers from its
// reading (RuntimeStats) and takes its node-pressure signals from the
// node's numbers of it (LastReading: memory, the root's and the image
// filesystem): the runtime, /proc and statfs are read once per period for
// all.
package nodestats
