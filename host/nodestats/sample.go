package nodestats

import (
	"time"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Sample is one reading of everything the summary is built from.
type Sample struct {
	Time time.Time
	Node NodeNumbers
	// Runtime is the runtime plugin's answer; nil when it failed.
	Runtime *runtimev1.ListStatsResponse
	// ImageFs is the capacity of the filesystem holding the runtime's
	// images (by statfs of its mount point); zero when unknown.
	ImageFs FsNumbers
	// Volumes are the pods' volumes' usage by pod UID, then volume name.
	Volumes map[string][]Volume
}

// NodeNumbers are the node's own numbers.
type NodeNumbers struct {
	BootTime time.Time
	// CPUNanos is the CPU time all cores spent busy since boot.
	CPUNanos uint64
	// Memory in bytes, from /proc/meminfo.
	MemTotal, MemAvailable, MemFree, InactiveFile uint64
	RootFs                                        FsNumbers
}

// MemoryUsage is the memory in use: all but the free memory.
func (n NodeNumbers) MemoryUsage() uint64 { return n.MemTotal - min(n.MemFree, n.MemTotal) }

// WorkingSet is the node's memory working set as the kubelet counts it:
// the memory in use less the inactive file cache, which the kernel can
// reclaim.
func (n NodeNumbers) WorkingSet() uint64 {
	usage := n.MemoryUsage()
	return usage - min(usage, n.InactiveFile)
}

// FsNumbers are one filesystem's capacity and use; Capacity 0 means
// unknown.
type FsNumbers struct {
	Capacity, Available, Used uint64
	Inodes, InodesFree        uint64
}

// Volume is one pod volume's usage.
type Volume struct {
	Name           string
	ClaimNamespace string
	ClaimName      string
	Usage          FsNumbers
}
