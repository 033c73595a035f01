package kubenode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// machine measures the host for the Node's capacity, node info and
// pressure conditions. Its fields are the OS calls (machine_linux.go), so
// that tests measure fixtures.
type machine struct {
	readFile func(name string) ([]byte, error)
	statfs   func(path string) (fsUsage, error)
	numCPU   func() int
	procs    func() (uint64, error) // processes and threads in existence
	kernel   func() (string, error) // the kernel release
}

// fsUsage is a file system's size and what unprivileged users may still
// write, in bytes.
type fsUsage struct{ total, available uint64 }

// capacity measures cpu, memory and ephemeral-storage (the file system of
// rootDir), with maxPods pods.
func (m machine) capacity(rootDir string, maxPods int64) (v1.ResourceList, error) {
	mem, err := m.meminfo("MemTotal")
	if err != nil {
		return nil, err
	}
	fs, err := m.statfs(rootDir)
	if err != nil {
		return nil, fmt.Errorf("measuring the file system of %s: %w", rootDir, err)
	}
	return v1.ResourceList{
		v1.ResourceCPU:              *resource.NewQuantity(int64(m.numCPU()), resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(int64(mem), resource.BinarySI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(int64(fs.total), resource.BinarySI),
		v1.ResourcePods:             *resource.NewQuantity(maxPods, resource.DecimalSI),
	}, nil
}

// allocatable is capacity less the eviction thresholds, as the kubelet
// reserves them: memory less t.MemoryAvailable, ephemeral-storage less
// t.DiskAvailablePercent of it; never below zero.
func allocatable(capacity v1.ResourceList, t Thresholds) v1.ResourceList {
	out := capacity.DeepCopy()
	if q, ok := out[v1.ResourceMemory]; ok {
		out[v1.ResourceMemory] = bytesQuantity(q.Value() - t.MemoryAvailable.Value())
	}
	if q, ok := out[v1.ResourceEphemeralStorage]; ok {
		out[v1.ResourceEphemeralStorage] = bytesQuantity(q.Value() - int64(float64(q.Value())*t.DiskAvailablePercent/100))
	}
	return out
}

func bytesQuantity(n int64) resource.Quantity {
	return *resource.NewQuantity(max(n, 0), resource.BinarySI)
}

// pressure measures memory (MemAvailable), disk (rootDir's file system)
// and PIDs (in use against the lower of pid_max and threads-max) against
// t. A signal that cannot be measured reports no pressure; the error says
// which.
func (m machine) pressure(rootDir string, t Thresholds) (Health, error) {
	var h Health
	var errs []error
	if avail, err := m.meminfo("MemAvailable"); err != nil {
		errs = append(errs, err)
	} else {
		h.MemoryPressure = int64(avail) < t.MemoryAvailable.Value()
	}
	if fs, err := m.statfs(rootDir); err != nil {
		errs = append(errs, fmt.Errorf("measuring the file system of %s: %w", rootDir, err))
	} else if fs.total > 0 {
		h.DiskPressure = float64(fs.available)*100/float64(fs.total) < t.DiskAvailablePercent
	}
	if limit, used, err := m.pids(); err != nil {
		errs = append(errs, err)
	} else if limit > 0 {
		free := float64(limit) - float64(used)
		h.PIDPressure = free*100/float64(limit) < t.PIDAvailablePercent
	}
	return h, errors.Join(errs...)
}

func (m machine) pids() (limit, used uint64, err error) {
	for _, f := range []string{"/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max"} {
		b, err := m.readFile(f)
		if err != nil {
			return 0, 0, fmt.Errorf("reading the PID limit: %w", err)
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parsing %s: %w", f, err)
		}
		if limit == 0 || n < limit {
			limit = n
		}
	}
	used, err = m.procs()
	if err != nil {
		return 0, 0, fmt.Errorf("counting processes: %w", err)
	}
	return limit, used, nil
}

func (m machine) meminfo(key string) (uint64, error) {
	b, err := m.readFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("reading memory info: %w", err)
	}
	return parseMeminfo(b, key)
}

// parseMeminfo returns the value of key in /proc/meminfo text, in bytes.
func parseMeminfo(b []byte, key string) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != key {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, fmt.Errorf("meminfo %s: no value", key)
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("meminfo %s: %w", key, err)
		}
		switch {
		case len(f) == 1:
			return n, nil
		case len(f) == 2 && f[1] == "kB":
			return n * 1024, nil
		}
		return 0, fmt.Errorf("meminfo %s: unknown unit in %q", key, strings.TrimSpace(rest))
	}
	return 0, fmt.Errorf("meminfo has no %s", key)
}

// systemInfo is status.nodeInfo without the versions: machine and boot
// IDs, kernel, OS image, OS and architecture. What cannot be read is left
// empty; it is for people to read.
func (m machine) systemInfo() v1.NodeSystemInfo {
	first := func(names ...string) string {
		for _, n := range names {
			if b, err := m.readFile(n); err == nil {
				if s := strings.TrimSpace(string(b)); s != "" {
					return s
				}
			}
		}
		return ""
	}
	info := v1.NodeSystemInfo{
		MachineID:       first("/etc/machine-id", "/var/lib/dbus/machine-id"),
		SystemUUID:      first("/sys/class/dmi/id/product_uuid"),
		BootID:          first("/proc/sys/kernel/random/boot_id"),
		OperatingSystem: runtime.GOOS,
		Architecture:    runtime.GOARCH,
	}
	info.KernelVersion, _ = m.kernel()
	if b, err := m.readFile("/etc/os-release"); err == nil {
		info.OSImage = parseOSRelease(b)
	}
	if info.OSImage == "" {
		info.OSImage = "Unknown"
	}
	return info
}

// parseOSRelease returns PRETTY_NAME of os-release text, unquoted.
func parseOSRelease(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || k != "PRETTY_NAME" {
			continue
		}
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return strings.Trim(v, `'"`)
	}
	return ""
}

// MachineMemory is the machine's memory capacity (MemTotal) in bytes.
func MachineMemory() (int64, error) {
	mem, err := hostMachine().meminfo("MemTotal")
	return int64(mem), err
}

// MachineAllocatable measures this machine as a Node with the default
// options does (cpu count, MemTotal, the file system of rootDir) and
// returns the allocatable it would report: what a host without an API
// server offers its pods, such as the downward API's default limits.
func MachineAllocatable(rootDir string) (v1.ResourceList, error) {
	var t Thresholds
	if errs := t.defaults(&t); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c, err := hostMachine().capacity(rootDir, DefaultMaxPods)
	if err != nil {
		return nil, err
	}
	return allocatable(c, t), nil
}
