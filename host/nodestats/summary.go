package nodestats

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Build makes the Summary of cur; prev, when not nil, is the reading
// before, for CPU rates.
func Build(nodeName string, cur Sample, prev *Sample) statsapi.Summary {
	s := statsapi.Summary{Node: nodeStats(nodeName, cur, prev), Pods: []statsapi.PodStats{}}
	if cur.Runtime == nil {
		return s
	}
	var before *runtimev1.ListStatsResponse
	if prev != nil {
		before = prev.Runtime
	}
	prevCPU := cpuByID(before)
	bySandbox := map[string][]*runtimev1.ContainerStats{}
	for _, c := range cur.Runtime.GetContainers() {
		bySandbox[c.GetSandboxId()] = append(bySandbox[c.GetSandboxId()], c)
	}
	for _, sb := range cur.Runtime.GetSandboxes() {
		m := sb.GetMetadata()
		p := statsapi.PodStats{
			PodRef:     statsapi.PodReference{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUid()},
			StartTime:  unixNano(sb.GetCreatedAt()),
			Containers: []statsapi.ContainerStats{},
			CPU:        cpuStats(sb.GetCpu(), prevCPU[sb.GetSandboxId()]),
			Memory:     memoryStats(sb.GetMemory(), 0),
			Network:    networkStats(sb.GetNetwork()),
		}
		for _, c := range latestByName(bySandbox[sb.GetSandboxId()]) {
			p.Containers = append(p.Containers, statsapi.ContainerStats{
				Name:      c.GetMetadata().GetName(),
				StartTime: unixNano(c.GetCreatedAt()),
				CPU:       cpuStats(c.GetCpu(), prevCPU[c.GetContainerId()]),
				Memory:    memoryStats(c.GetMemory(), 0),
				Rootfs:    layerStats(c.GetWritableLayer(), cur.ImageFs),
			})
		}
		for _, v := range cur.Volumes[m.GetUid()] {
			vs := statsapi.VolumeStats{Name: v.Name, FsStats: fsStats(cur.Time, v.Usage)}
			if v.ClaimName != "" {
				vs.PVCRef = &statsapi.PVCReference{Name: v.ClaimName, Namespace: v.ClaimNamespace}
			}
			p.VolumeStats = append(p.VolumeStats, vs)
		}
		s.Pods = append(s.Pods, p)
	}
	slices.SortFunc(s.Pods, func(a, b statsapi.PodStats) int {
		return cmp.Or(cmp.Compare(a.PodRef.Namespace, b.PodRef.Namespace), cmp.Compare(a.PodRef.Name, b.PodRef.Name), cmp.Compare(a.PodRef.UID, b.PodRef.UID))
	})
	return s
}

func nodeStats(name string, cur Sample, prev *Sample) statsapi.NodeStats {
	n := cur.Node
	ns := statsapi.NodeStats{NodeName: name, StartTime: metav1.NewTime(n.BootTime)}
	if n.CPUNanos > 0 {
		var before *runtimev1.CpuUsage
		if prev != nil && prev.Node.CPUNanos > 0 {
			before = &runtimev1.CpuUsage{Timestamp: prev.Time.UnixNano(), UsageCoreNanoSeconds: prev.Node.CPUNanos}
		}
		ns.CPU = cpuStats(&runtimev1.CpuUsage{Timestamp: cur.Time.UnixNano(), UsageCoreNanoSeconds: n.CPUNanos}, before)
	}
	if n.MemTotal > 0 {
		ns.Memory = memoryStats(&runtimev1.MemoryUsage{Timestamp: cur.Time.UnixNano(), UsageBytes: n.MemoryUsage(), WorkingSetBytes: n.WorkingSet()}, n.MemAvailable)
	}
	if n.RootFs.Capacity > 0 {
		fs := fsStats(cur.Time, n.RootFs)
		ns.Fs = &fs
	}
	// The first image filesystem is the image store (the kubelet's
	// ImageFs); Gather read its capacity.
	if fss := cur.Runtime.GetImageFilesystems(); len(fss) > 0 {
		fs := fss[0]
		img := cur.ImageFs
		img.Used = fs.GetUsedBytes()
		st := fsStats(unixNano(fs.GetTimestamp()).Time, img)
		if cur.ImageFs.Capacity == 0 {
			st = statsapi.FsStats{Time: unixNano(fs.GetTimestamp()), UsedBytes: ptr(fs.GetUsedBytes())}
		}
		st.InodesUsed = ptr(fs.GetInodesUsed())
		ns.Runtime = &statsapi.RuntimeStats{ImageFs: &st}
	}
	return ns
}

// latestByName keeps the newest container of each name (an exited
// attempt stays listed until it is removed), sorted by name.
func latestByName(cs []*runtimev1.ContainerStats) []*runtimev1.ContainerStats {
	byName := map[string]*runtimev1.ContainerStats{}
	for _, c := range cs {
		n := c.GetMetadata().GetName()
		if old, ok := byName[n]; !ok || c.GetCreatedAt() > old.GetCreatedAt() {
			byName[n] = c
		}
	}
	out := make([]*runtimev1.ContainerStats, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *runtimev1.ContainerStats) int {
		return cmp.Compare(a.GetMetadata().GetName(), b.GetMetadata().GetName())
	})
	return out
}

func cpuByID(r *runtimev1.ListStatsResponse) map[string]*runtimev1.CpuUsage {
	m := map[string]*runtimev1.CpuUsage{}
	for _, s := range r.GetSandboxes() {
		if s.GetCpu() != nil {
			m[s.GetSandboxId()] = s.GetCpu()
		}
	}
	for _, c := range r.GetContainers() {
		if c.GetCpu() != nil {
			m[c.GetContainerId()] = c.GetCpu()
		}
	}
	return m
}

// cpuStats is nil for an unknown usage; the rate is set when prev is an
// earlier reading of no more usage (a restarted counter gives none).
func cpuStats(c, prev *runtimev1.CpuUsage) *statsapi.CPUStats {
	if c == nil {
		return nil
	}
	out := &statsapi.CPUStats{Time: unixNano(c.GetTimestamp()), UsageCoreNanoSeconds: ptr(c.GetUsageCoreNanoSeconds())}
	if prev != nil && prev.GetTimestamp() < c.GetTimestamp() && prev.GetUsageCoreNanoSeconds() <= c.GetUsageCoreNanoSeconds() {
		d := float64(c.GetUsageCoreNanoSeconds()-prev.GetUsageCoreNanoSeconds()) / float64(c.GetTimestamp()-prev.GetTimestamp())
		out.UsageNanoCores = ptr(uint64(d * 1e9))
	}
	return out
}

func memoryStats(m *runtimev1.MemoryUsage, available uint64) *statsapi.MemoryStats {
	if m == nil {
		return nil
	}
	out := &statsapi.MemoryStats{Time: unixNano(m.GetTimestamp()), WorkingSetBytes: ptr(m.GetWorkingSetBytes()), UsageBytes: ptr(m.GetUsageBytes())}
	if m.GetRssBytes() > 0 {
		out.RSSBytes = ptr(m.GetRssBytes())
	}
	if m.GetPageFaults() > 0 {
		out.PageFaults, out.MajorPageFaults = ptr(m.GetPageFaults()), ptr(m.GetMajorPageFaults())
	}
	if available > 0 {
		out.AvailableBytes = ptr(available)
	}
	return out
}

func networkStats(n *runtimev1.NetworkUsage) *statsapi.NetworkStats {
	if n == nil {
		return nil
	}
	iface := func(i *runtimev1.InterfaceUsage) statsapi.InterfaceStats {
		return statsapi.InterfaceStats{Name: i.GetName(), RxBytes: ptr(i.GetRxBytes()), RxErrors: ptr(i.GetRxErrors()),
			TxBytes: ptr(i.GetTxBytes()), TxErrors: ptr(i.GetTxErrors())}
	}
	out := &statsapi.NetworkStats{Time: unixNano(n.GetTimestamp()), InterfaceStats: iface(n.GetDefaultInterface())}
	for _, i := range n.GetInterfaces() {
		out.Interfaces = append(out.Interfaces, iface(i))
	}
	return out
}

// layerStats is a writable layer's use on the image filesystem.
func layerStats(l *runtimev1.FilesystemUsage, imageFs FsNumbers) *statsapi.FsStats {
	if l == nil {
		return nil
	}
	out := &statsapi.FsStats{Time: unixNano(l.GetTimestamp()), UsedBytes: ptr(l.GetUsedBytes()), InodesUsed: ptr(l.GetInodesUsed())}
	if imageFs.Capacity > 0 {
		out.CapacityBytes, out.AvailableBytes = ptr(imageFs.Capacity), ptr(imageFs.Available)
		out.Inodes, out.InodesFree = ptr(imageFs.Inodes), ptr(imageFs.InodesFree)
	}
	return out
}

func fsStats(t time.Time, f FsNumbers) statsapi.FsStats {
	out := statsapi.FsStats{Time: metav1.NewTime(t), CapacityBytes: ptr(f.Capacity), AvailableBytes: ptr(f.Available), UsedBytes: ptr(f.Used)}
	if f.Inodes > 0 {
		out.Inodes, out.InodesFree, out.InodesUsed = ptr(f.Inodes), ptr(f.InodesFree), ptr(f.Inodes-min(f.Inodes, f.InodesFree))
	}
	return out
}

func unixNano(ns int64) metav1.Time {
	if ns == 0 {
		return metav1.Time{}
	}
	return metav1.NewTime(time.Unix(0, ns))
}

func ptr(v uint64) *uint64 { return &v }
