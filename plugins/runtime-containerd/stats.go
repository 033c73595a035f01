package main

import (
	"context"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// ListStats maps the contract's call onto CRI's.
func (s *server) ListStats(ctx context.Context, _ *runtimev1.ListStatsRequest) (*runtimev1.ListStatsResponse, error) {
	st, err := s.rt.Stats(ctx)
	if err != nil {
		return reply[runtimev1.ListStatsResponse](nil, err)
	}
	resp := &runtimev1.ListStatsResponse{}
	for _, sb := range st.sandboxes {
		resp.Sandboxes = append(resp.Sandboxes, sandboxStatsToProto(sb, st.createdAt[sb.GetAttributes().GetId()]))
	}
	for _, c := range st.containers {
		id := c.GetAttributes().GetId()
		resp.Containers = append(resp.Containers, containerStatsToProto(c, st.sandboxOf[id], st.createdAt[id]))
	}
	for _, fs := range st.imageFs {
		resp.ImageFilesystems = append(resp.ImageFilesystems, fsToProto(fs))
	}
	return resp, nil
}

// runtimeStats is one reading of containerd's CRI stats.
type runtimeStats struct {
	sandboxes  []*criapi.PodSandboxStats
	containers []*criapi.ContainerStats
	sandboxOf  map[string]string // container ID → sandbox ID
	createdAt  map[string]int64  // sandbox or container ID → creation
	imageFs    []*criapi.FilesystemUsage
}

// Stats reads every container's stats from containerd's CRI
// (ListContainerStats, which reads the containers' cgroups) and the
// sandboxes with ListPodSandbox and ListContainers (container stats do not
// name their sandbox). A sandbox's CPU and memory are the sums of its
// containers': containerd 1.6's ListPodSandboxStats reads a pod cgroup,
// which a sandbox without a cgroup parent (podhost sets none) does not
// have, and then fails the whole call ("cgroupPath is empty"). Sandbox
// network counters are therefore not reported. A container removed
// between the calls has no sandbox and is left out.
func (r *criRuntime) Stats(ctx context.Context) (runtimeStats, error) {
	b, err := r.backend()
	if err != nil {
		return runtimeStats{}, err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	cs, err := b.rt.ListContainerStats(ctx, &criapi.ListContainerStatsRequest{})
	if err != nil {
		return runtimeStats{}, criError("list container stats", err)
	}
	list, err := b.rt.ListContainers(ctx, &criapi.ListContainersRequest{})
	if err != nil {
		return runtimeStats{}, criError("list containers", err)
	}
	sbs, err := b.rt.ListPodSandbox(ctx, &criapi.ListPodSandboxRequest{})
	if err != nil {
		return runtimeStats{}, criError("list pod sandboxes", err)
	}
	img, err := b.img.ImageFsInfo(ctx, &criapi.ImageFsInfoRequest{})
	if err != nil {
		return runtimeStats{}, criError("image filesystem info", err)
	}
	st := joinStats(sbs.GetItems(), list.GetContainers(), cs.GetStats())
	st.imageFs = img.GetImageFilesystems()
	return st, nil
}

// joinStats names each container's sandbox and sums the containers of
// each sandbox into its stats.
func joinStats(sandboxes []*criapi.PodSandbox, containers []*criapi.Container, stats []*criapi.ContainerStats) runtimeStats {
	st := runtimeStats{sandboxOf: map[string]string{}, createdAt: map[string]int64{}}
	for _, c := range containers {
		st.sandboxOf[c.GetId()] = c.GetPodSandboxId()
		st.createdAt[c.GetId()] = c.GetCreatedAt()
	}
	perSandbox := map[string][]*criapi.ContainerStats{}
	for _, c := range stats {
		if sb := st.sandboxOf[c.GetAttributes().GetId()]; sb != "" {
			st.containers = append(st.containers, c)
			perSandbox[sb] = append(perSandbox[sb], c)
		}
	}
	for _, sb := range sandboxes {
		if sb.GetState() != criapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		st.createdAt[sb.GetId()] = sb.GetCreatedAt()
		out := &criapi.PodSandboxStats{
			Attributes: &criapi.PodSandboxAttributes{Id: sb.GetId(), Metadata: sb.GetMetadata(), Labels: sb.GetLabels(), Annotations: sb.GetAnnotations()},
			Linux:      &criapi.LinuxPodSandboxStats{},
		}
		for _, c := range perSandbox[sb.GetId()] {
			out.Linux.Cpu = addCPU(out.Linux.Cpu, c.GetCpu())
			out.Linux.Memory = addMemory(out.Linux.Memory, c.GetMemory())
		}
		st.sandboxes = append(st.sandboxes, out)
	}
	return st
}

func addCPU(sum, c *criapi.CpuUsage) *criapi.CpuUsage {
	if c.GetUsageCoreNanoSeconds() == nil {
		return sum
	}
	if sum == nil {
		sum = &criapi.CpuUsage{UsageCoreNanoSeconds: &criapi.UInt64Value{}}
	}
	sum.Timestamp = max(sum.Timestamp, c.GetTimestamp())
	sum.UsageCoreNanoSeconds.Value += c.GetUsageCoreNanoSeconds().GetValue()
	return sum
}

func addMemory(sum, m *criapi.MemoryUsage) *criapi.MemoryUsage {
	if m.GetWorkingSetBytes() == nil {
		return sum
	}
	if sum == nil {
		sum = &criapi.MemoryUsage{WorkingSetBytes: &criapi.UInt64Value{}, UsageBytes: &criapi.UInt64Value{}, RssBytes: &criapi.UInt64Value{},
			PageFaults: &criapi.UInt64Value{}, MajorPageFaults: &criapi.UInt64Value{}}
	}
	sum.Timestamp = max(sum.Timestamp, m.GetTimestamp())
	sum.WorkingSetBytes.Value += m.GetWorkingSetBytes().GetValue()
	sum.UsageBytes.Value += m.GetUsageBytes().GetValue()
	sum.RssBytes.Value += m.GetRssBytes().GetValue()
	sum.PageFaults.Value += m.GetPageFaults().GetValue()
	sum.MajorPageFaults.Value += m.GetMajorPageFaults().GetValue()
	return sum
}

func sandboxStatsToProto(s *criapi.PodSandboxStats, createdAt int64) *runtimev1.SandboxStats {
	a := s.GetAttributes()
	m := a.GetMetadata()
	l := s.GetLinux()
	return &runtimev1.SandboxStats{
		SandboxId: a.GetId(),
		Metadata:  &runtimev1.SandboxMetadata{Name: m.GetName(), Namespace: m.GetNamespace(), Uid: m.GetUid(), Attempt: m.GetAttempt()},
		Labels:    hostLabels(a.GetLabels()),
		Cpu:       cpuToProto(l.GetCpu()),
		Memory:    memoryToProto(l.GetMemory()),
		Network:   networkToProto(l.GetNetwork()),
		CreatedAt: createdAt,
	}
}

func containerStatsToProto(c *criapi.ContainerStats, sandboxID string, createdAt int64) *runtimev1.ContainerStats {
	a := c.GetAttributes()
	out := &runtimev1.ContainerStats{
		ContainerId: a.GetId(),
		SandboxId:   sandboxID,
		Metadata:    &runtimev1.ContainerMetadata{Name: a.GetMetadata().GetName(), Attempt: a.GetMetadata().GetAttempt()},
		Labels:      hostLabels(a.GetLabels()),
		Cpu:         cpuToProto(c.GetCpu()),
		Memory:      memoryToProto(c.GetMemory()),
		CreatedAt:   createdAt,
	}
	if fs := c.GetWritableLayer(); fs != nil && fs.GetUsedBytes() != nil {
		out.WritableLayer = fsToProto(fs)
	}
	return out
}

func fsToProto(fs *criapi.FilesystemUsage) *runtimev1.FilesystemUsage {
	return &runtimev1.FilesystemUsage{Timestamp: fs.GetTimestamp(), Mountpoint: fs.GetFsId().GetMountpoint(),
		UsedBytes: fs.GetUsedBytes().GetValue(), InodesUsed: fs.GetInodesUsed().GetValue()}
}

// cpuToProto is nil when CRI did not tell the usage.
func cpuToProto(c *criapi.CpuUsage) *runtimev1.CpuUsage {
	if c == nil || c.GetUsageCoreNanoSeconds() == nil {
		return nil
	}
	return &runtimev1.CpuUsage{Timestamp: c.GetTimestamp(), UsageCoreNanoSeconds: c.GetUsageCoreNanoSeconds().GetValue()}
}

// memoryToProto is nil when CRI did not tell the working set.
func memoryToProto(m *criapi.MemoryUsage) *runtimev1.MemoryUsage {
	if m == nil || m.GetWorkingSetBytes() == nil {
		return nil
	}
	return &runtimev1.MemoryUsage{Timestamp: m.GetTimestamp(), WorkingSetBytes: m.GetWorkingSetBytes().GetValue(),
		UsageBytes: m.GetUsageBytes().GetValue(), RssBytes: m.GetRssBytes().GetValue(),
		PageFaults: m.GetPageFaults().GetValue(), MajorPageFaults: m.GetMajorPageFaults().GetValue()}
}

func networkToProto(n *criapi.NetworkUsage) *runtimev1.NetworkUsage {
	if n == nil || n.GetDefaultInterface() == nil {
		return nil
	}
	out := &runtimev1.NetworkUsage{Timestamp: n.GetTimestamp(), DefaultInterface: interfaceToProto(n.GetDefaultInterface())}
	for _, i := range n.GetInterfaces() {
		out.Interfaces = append(out.Interfaces, interfaceToProto(i))
	}
	return out
}

func interfaceToProto(i *criapi.NetworkInterfaceUsage) *runtimev1.InterfaceUsage {
	return &runtimev1.InterfaceUsage{Name: i.GetName(), RxBytes: i.GetRxBytes().GetValue(), RxErrors: i.GetRxErrors().GetValue(),
		TxBytes: i.GetTxBytes().GetValue(), TxErrors: i.GetTxErrors().GetValue()}
}
