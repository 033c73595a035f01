package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/podhost/podhost/sdk/cgroupdir"
)

// Pod cgroups (SandboxConfig.pod_cgroup): the plugin makes the pod's own
// cgroup with the cgroupfs layout the kubelet uses, writes its limits, and
// gives its path to CRI as the sandbox's cgroup parent, so that containerd
// (cgroupfs driver) puts the sandbox and all its containers below it. It
// writes the files itself, since CRI has no call for a pod's cgroup. The
// sandbox carries the pod's QoS class in the label labelPodCgroupQOS, from
// which, with the pod UID of its metadata, the path is found again after a
// restart of the plugin; RemoveSandbox removes the cgroup after CRI removed
// the sandbox. Under the systemd cgroup driver no pod cgroup is made: a
// required one is refused, and a sandbox asked for any other runs without
// it (podCgroupUnder), its containers too (withPodCgroup).

// PodCgroup is a pod's own cgroup as RunSandbox is asked to make it.
type PodCgroup struct {
	QOSClass  string
	Resources Resources // OOMScoreAdj is ignored
	// Required: the pod has pod-level resources or an overhead. Under the
	// systemd cgroup driver such a sandbox is refused, and any other runs
	// without a pod cgroup (podCgroupUnder).
	Required bool
}

// podCgroupRoot is the cgroup of all pods, as the kubelet names it.
const podCgroupRoot = "/kubepods"

// qosDirs are the QoS classes and the directory of their pods below
// podCgroupRoot.
var qosDirs = map[string]string{"Guaranteed": "", "Burstable": "burstable", "BestEffort": "besteffort"}

// podUIDPattern is what a pod UID may look like to become a cgroup name:
// a UUID or a similar token, never a path.
var podUIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

// podCgroupPath is the cgroupfs path of the pod uid's cgroup for its QoS
// class, e.g. /kubepods/burstable/pod<uid>.
func podCgroupPath(qos, uid string) (string, error) {
	dir, ok := qosDirs[qos]
	if !ok {
		return "", fmt.Errorf("%w: pod_cgroup.qos_class %q is none of Guaranteed, Burstable, BestEffort", errInvalid, qos)
	}
	if !podUIDPattern.MatchString(uid) {
		return "", fmt.Errorf("%w: pod_cgroup: the pod uid %q cannot name a cgroup (letters, digits, '-' and '_' only)", errInvalid, uid)
	}
	return path.Join(podCgroupRoot, dir, "pod"+uid), nil
}

// qosOfPath is the QoS class of the pod cgroup path p (podCgroupPath's).
func qosOfPath(p string) (string, bool) {
	for qos, dir := range qosDirs {
		if path.Dir(p) == path.Join(podCgroupRoot, dir) {
			return qos, true
		}
	}
	return "", false
}

// checkPodCgroupResources refuses values that are no limit: 0 and -1 are
// "unlimited" for the quota and the memory limit, 0 "unchanged" for the
// shares and the period.
func checkPodCgroupResources(r Resources) error {
	for _, f := range []struct {
		name     string
		value    int64
		minValue int64
	}{
		{"cpu_shares", r.CPUShares, 0},
		{"cpu_period", r.CPUPeriod, 0},
		{"cpu_quota", r.CPUQuota, -1},
		{"memory_limit_in_bytes", r.MemoryLimitInBytes, -1},
	} {
		if f.value < f.minValue {
			return fmt.Errorf("%w: pod_cgroup resources %s %d is negative", errInvalid, f.name, f.value)
		}
	}
	return nil
}

// cgroupFS writes pod cgroups below the cgroup file system at root
// (/sys/fs/cgroup), cgroup v1 (one hierarchy per controller) or v2.
type cgroupFS struct {
	root string
	// busyWait bounds the retries of a removal the kernel refuses with
	// EBUSY (the last processes of a killed container not yet reaped).
	busyWait time.Duration
}

const (
	defaultCgroupFSRoot = "/sys/fs/cgroup"
	podCgroupBusyWait   = 10 * time.Second
)

// unified reports whether the machine has cgroup v2.
func (fs cgroupFS) unified() bool {
	_, err := os.Stat(filepath.Join(fs.root, "cgroup.controllers"))
	return err == nil
}

// v1Hierarchies are the cgroup v1 hierarchies the plugin writes; runc
// makes the pod's directories in the others when it puts the sandbox
// below it.
var v1Hierarchies = []string{"cpu", "memory"}

// v2Controllers are the controllers the pod cgroup needs in cgroup v2.
var v2Controllers = []string{"cpu", "memory"}

// create makes the pod cgroup p (a cgroupfs path) and writes r. It is
// idempotent: an existing cgroup gets r.
func (fs cgroupFS) create(p string, r Resources) error {
	if fs.unified() {
		if err := fs.enableV2(p); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(fs.root, p), 0o755); err != nil {
			return fmt.Errorf("make pod cgroup: %w", err)
		}
		return fs.writeV2(p, r)
	}
	for _, h := range v1Hierarchies {
		// Not mounted: MkdirAll would make plain directories instead.
		if _, err := os.Stat(filepath.Join(fs.root, h, "cgroup.procs")); err != nil {
			return fmt.Errorf("cgroup v1 hierarchy %s: %w", h, err)
		}
		if err := os.MkdirAll(filepath.Join(fs.root, h, p), 0o755); err != nil {
			return fmt.Errorf("make pod cgroup: %w", err)
		}
	}
	return fs.writeV1(p, r)
}

// update writes r to the existing pod cgroup p; a missing cgroup is an
// error, not made anew.
func (fs cgroupFS) update(p string, r Resources) error {
	if fs.unified() {
		if _, err := os.Stat(filepath.Join(fs.root, p)); err != nil {
			return fmt.Errorf("pod cgroup: %w", err)
		}
		return fs.writeV2(p, r)
	}
	for _, h := range v1Hierarchies {
		if _, err := os.Stat(filepath.Join(fs.root, h, p)); err != nil {
			return fmt.Errorf("pod cgroup: %w", err)
		}
	}
	return fs.writeV1(p, r)
}

// enableV2 enables the pod cgroup's controllers in every ancestor of p,
// from the root down, making the ancestors as needed.
func (fs cgroupFS) enableV2(p string) error {
	enable := "+" + strings.Join(v2Controllers, " +")
	parts := strings.Split(strings.Trim(path.Dir(p), "/"), "/")
	dir := fs.root
	for i := 0; ; i++ {
		if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), enable); err != nil {
			return err
		}
		if i == len(parts) || parts[i] == "" {
			return nil
		}
		dir = filepath.Join(dir, parts[i])
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("make cgroup: %w", err)
		}
	}
}

// cgroupWrite is one value to write to a cgroup file.
type cgroupWrite struct{ file, value string }

// writeV1 writes r to the pod cgroup p of cgroup v1: the memory limit
// first, the one the kernel refuses most (below usage), then the CPU
// files, the CFS period before the quota or, when the kernel refuses that
// (the quota at the old period exceeds a parent's or a child's), after it.
func (fs cgroupFS) writeV1(p string, r Resources) error {
	cpu := filepath.Join(fs.root, "cpu", p)
	writes := []cgroupWrite{{filepath.Join(fs.root, "memory", p, "memory.limit_in_bytes"), strconv.FormatInt(unlimitedAsMinusOne(r.MemoryLimitInBytes), 10)}}
	if r.CPUShares > 0 {
		writes = append(writes, cgroupWrite{filepath.Join(cpu, "cpu.shares"), strconv.FormatInt(r.CPUShares, 10)})
	}
	quota := cgroupWrite{filepath.Join(cpu, "cpu.cfs_quota_us"), strconv.FormatInt(unlimitedAsMinusOne(r.CPUQuota), 10)}
	if r.CPUPeriod <= 0 {
		return applyWrites(append(writes, quota))
	}
	period := cgroupWrite{filepath.Join(cpu, "cpu.cfs_period_us"), strconv.FormatInt(r.CPUPeriod, 10)}
	err := applyWrites(append(slices.Clone(writes), period, quota))
	if errors.Is(err, syscall.EINVAL) {
		err = applyWrites(append(writes, quota, period))
	}
	return err
}

// writeV2 writes r to the pod cgroup p of cgroup v2, the memory limit
// first as in writeV1.
func (fs cgroupFS) writeV2(p string, r Resources) error {
	dir := filepath.Join(fs.root, p)
	memory := "max"
	if r.MemoryLimitInBytes > 0 {
		memory = strconv.FormatInt(r.MemoryLimitInBytes, 10)
	}
	writes := []cgroupWrite{{filepath.Join(dir, "memory.max"), memory}}
	if r.CPUShares > 0 {
		writes = append(writes, cgroupWrite{filepath.Join(dir, "cpu.weight"), strconv.FormatUint(sharesToWeight(r.CPUShares), 10)})
	}
	return applyWrites(append(writes, cgroupWrite{filepath.Join(dir, "cpu.max"), cpuMax(r.CPUQuota, r.CPUPeriod)}))
}

// applyWrites makes the writes in order; when one fails, those made are
// undone, last first, so that a refused update changes nothing.
func applyWrites(writes []cgroupWrite) error {
	var undo []cgroupWrite
	for _, w := range writes {
		old, readErr := os.ReadFile(w.file)
		if err := writeFile(w.file, w.value); err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				_ = writeFile(undo[i].file, undo[i].value)
			}
			return err
		}
		if readErr == nil {
			undo = append(undo, cgroupWrite{w.file, strings.TrimSpace(string(old))})
		}
	}
	return nil
}

// defaultCPUPeriod is the kernel's CFS period, in microseconds.
const defaultCPUPeriod = 100000

// cpuMax is cgroup v2's cpu.max of a quota and period: "max" for no
// quota, the kernel's period for none.
func cpuMax(quota, period int64) string {
	if period <= 0 {
		period = defaultCPUPeriod
	}
	q := "max"
	if quota > 0 {
		q = strconv.FormatInt(quota, 10)
	}
	return q + " " + strconv.FormatInt(period, 10)
}

// sharesToWeight converts cgroup v1 CPU shares [2, 262144] to a cgroup v2
// weight [1, 10000] on the same linear scale runc and the kubelet use;
// shares out of range are clamped first.
func sharesToWeight(shares int64) uint64 {
	shares = min(max(shares, 2), 262144)
	return uint64(1 + ((shares-2)*9999)/262142)
}

// unlimitedAsMinusOne is v1's value of a limit where 0 or less is none.
func unlimitedAsMinusOne(v int64) int64 {
	if v <= 0 {
		return -1
	}
	return v
}

// writeFile writes a cgroup file, naming it in the error.
func writeFile(name, value string) error {
	if err := os.WriteFile(name, []byte(value), 0o644); err != nil {
		return fmt.Errorf("write %s to %s: %w", value, name, err)
	}
	return nil
}

// remove removes the pod cgroup p from every hierarchy (runc made it in
// those the plugin did not); it is idempotent. Its children, the sandbox's
// and its containers' cgroups, went with them (runc). The kernel
// refuses with EBUSY while a killed process is not yet reaped; that is
// retried for busyWait, or until ctx ends.
func (fs cgroupFS) remove(ctx context.Context, p string) error {
	dirs := []string{filepath.Join(fs.root, p)}
	if !fs.unified() {
		dirs = dirs[:0]
		entries, err := os.ReadDir(fs.root)
		if err != nil {
			return fmt.Errorf("remove pod cgroup: %w", err)
		}
		for _, e := range entries {
			// cpu and cpuacct are often links to cpu,cpuacct.
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(fs.root, e.Name(), p))
			}
		}
	}
	if err := cgroupdir.Remove(ctx, dirs, fs.busyWait); err != nil {
		return fmt.Errorf("remove pod cgroup: %w", err)
	}
	return nil
}

// setQOSShares gives the QoS cgroup of qos its CPU weight after one of its
// pod cgroups was made, changed or removed, as the kubelet's QoS manager
// does: /kubepods/besteffort the least (2 shares), /kubepods/burstable the
// sum of its pod cgroups' shares (the kubelet sums their requests, then
// converts; the sum of each pod's conversion differs by rounding only), at
// least 2. Guaranteed pods sit directly below /kubepods: nothing to set.
// The caller serializes calls (criRuntime.qosMu), so the last one wrote a
// sum read after every change that preceded it.
func (fs cgroupFS) setQOSShares(qos string) error {
	dir := qosDirs[qos]
	if dir == "" {
		return nil
	}
	qosCgroup := path.Join(podCgroupRoot, dir)
	shares := int64(minQOSShares)
	if dir == "burstable" {
		sum, err := fs.podShares(qosCgroup)
		if err != nil {
			return err
		}
		shares = max(shares, sum)
	}
	if fs.unified() {
		return writeFile(filepath.Join(fs.root, qosCgroup, "cpu.weight"), strconv.FormatUint(sharesToWeight(shares), 10))
	}
	return writeFile(filepath.Join(fs.root, "cpu", qosCgroup, "cpu.shares"), strconv.FormatInt(shares, 10))
}

// minQOSShares is the least CPU weight of a cgroup, in shares.
const minQOSShares = 2

// podShares is the sum of the CPU shares of the pod cgroups (pod*) below
// qosCgroup; cgroup v2's weights are converted back to shares.
func (fs cgroupFS) podShares(qosCgroup string) (int64, error) {
	dir, file := filepath.Join(fs.root, "cpu", qosCgroup), "cpu.shares"
	if fs.unified() {
		dir, file = filepath.Join(fs.root, qosCgroup), "cpu.weight"
	}
	pods, err := filepath.Glob(filepath.Join(dir, "pod*", file))
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, f := range pods {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		if file == "cpu.weight" {
			v = weightToShares(v)
		}
		sum += v
	}
	return sum, nil
}

// weightToShares inverts sharesToWeight as well as it can: a weight
// stands for about 26 share values, and it gives the middle one, so that
// a sum of pods' shares read back from their weights errs both ways.
func weightToShares(weight int64) int64 {
	least := func(w int64) int64 { return 2 + ((w-1)*262142+9998)/9999 }
	return (least(weight) + least(weight+1) - 1) / 2
}
