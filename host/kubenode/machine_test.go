package kubenode

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const meminfo = `MemTotal:       16318412 kB
MemFree:         1234567 kB
MemAvailable:     %s kB
HugePages_Total:       0
`

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		text, key string
		want      uint64
		err       string
	}{
		{strings.Replace(meminfo, "%s", "2048", 1), "MemTotal", 16318412 * 1024, ""},
		{strings.Replace(meminfo, "%s", "2048", 1), "MemAvailable", 2048 * 1024, ""},
		{strings.Replace(meminfo, "%s", "2048", 1), "HugePages_Total", 0, ""},
		{"MemTotal: 12 MB\n", "MemTotal", 0, "unknown unit"},
		{"MemTotal: x kB\n", "MemTotal", 0, "invalid syntax"},
		{"MemTotal:\n", "MemTotal", 0, "no value"},
		{"MemFree: 1 kB\n", "MemTotal", 0, "has no MemTotal"},
	}
	for _, tt := range tests {
		got, err := parseMeminfo([]byte(tt.text), tt.key)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s in %q: %v, %v; want error %q", tt.key, tt.text, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s in %q: %v, %v; want %v", tt.key, tt.text, got, err, tt.want)
		}
	}
}

func TestParseOSRelease(t *testing.T) {
	tests := map[string]string{
		"NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n": "Debian GNU/Linux 12 (bookworm)",
		"PRETTY_NAME=Alpine\n":      "Alpine",
		"PRETTY_NAME='Fedora 40'\n": "Fedora 40",
		"NAME=x\n":                  "",
	}
	for in, want := range tests {
		if got := parseOSRelease([]byte(in)); got != want {
			t.Errorf("parseOSRelease(%q) = %q; want %q", in, got, want)
		}
	}
}

// fixtureMachine measures fixed numbers: 4 CPUs, 16318412 kB of memory
// with memAvailable kB free, a 100 GiB file system with diskFree GiB free,
// pid_max 1000 (threads-max higher) with procs in use.
func fixtureMachine(memAvailable string, diskFree, procs uint64) machine {
	files := map[string]string{
		"/proc/meminfo":                   strings.Replace(meminfo, "%s", memAvailable, 1),
		"/proc/sys/kernel/pid_max":        "1000\n",
		"/proc/sys/kernel/threads-max":    "50000\n",
		"/etc/machine-id":                 "abc\n",
		"/proc/sys/kernel/random/boot_id": "boot-1\n",
		"/etc/os-release":                 "PRETTY_NAME=\"Test OS 1\"\n",
	}
	return machine{
		readFile: func(name string) ([]byte, error) {
			if s, ok := files[name]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		},
		statfs: func(string) (fsUsage, error) { return fsUsage{total: 100 << 30, available: diskFree << 30}, nil },
		numCPU: func() int { return 4 },
		procs:  func() (uint64, error) { return procs, nil },
		kernel: func() (string, error) { return "6.1.0-test", nil },
	}
}

func TestPressure(t *testing.T) {
	th := Thresholds{MemoryAvailable: resource.MustParse("100Mi"), DiskAvailablePercent: 10, PIDAvailablePercent: 5}
	tests := []struct {
		name         string
		m            machine
		memory, disk bool
		pid          bool
	}{
		{"none", fixtureMachine("2000000", 50, 100), false, false, false},
		{"memory below 100Mi", fixtureMachine("102399", 50, 100), true, false, false},
		{"memory at 100Mi", fixtureMachine("102400", 50, 100), false, false, false},
		{"disk below 10%", fixtureMachine("2000000", 9, 100), false, true, false},
		{"disk at 10%", fixtureMachine("2000000", 10, 100), false, false, false},
		{"pids above 95%", fixtureMachine("2000000", 50, 951), false, false, true},
		{"pids at 95%", fixtureMachine("2000000", 50, 950), false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := tt.m.pressure("/root", th)
			if err != nil {
				t.Fatal(err)
			}
			if h.MemoryPressure != tt.memory || h.DiskPressure != tt.disk || h.PIDPressure != tt.pid {
				t.Errorf("pressure %+v; want memory %v disk %v pid %v", h, tt.memory, tt.disk, tt.pid)
			}
		})
	}
	m := fixtureMachine("1", 1, 1)
	m.statfs = func(string) (fsUsage, error) { return fsUsage{}, errors.New("no such file system") }
	h, err := m.pressure("/gone", th)
	if err == nil || !strings.Contains(err.Error(), "/gone") || h.DiskPressure || !h.MemoryPressure {
		t.Errorf("with statfs failing: %+v, %v; want memory pressure, no disk pressure, an error naming /gone", h, err)
	}
}

func TestCapacityAndAllocatable(t *testing.T) {
	c, err := fixtureMachine("1", 1, 1).capacity("/root", 50)
	if err != nil {
		t.Fatal(err)
	}
	want := map[v1.ResourceName]int64{v1.ResourceCPU: 4, v1.ResourceMemory: 16318412 * 1024, v1.ResourceEphemeralStorage: 100 << 30, v1.ResourcePods: 50}
	for r, n := range want {
		if q := c[r]; q.Value() != n {
			t.Errorf("capacity %s = %s; want %d", r, q.String(), n)
		}
	}
	a := allocatable(c, Thresholds{MemoryAvailable: resource.MustParse("100Mi"), DiskAvailablePercent: 10})
	wantAlloc := map[v1.ResourceName]int64{v1.ResourceCPU: 4, v1.ResourceMemory: 16318412*1024 - 100<<20, v1.ResourceEphemeralStorage: 90 << 30, v1.ResourcePods: 50}
	for r, n := range wantAlloc {
		if q := a[r]; q.Value() != n {
			t.Errorf("allocatable %s = %s; want %d", r, q.String(), n)
		}
	}
	small := allocatable(v1.ResourceList{v1.ResourceMemory: resource.MustParse("10Mi")}, Thresholds{MemoryAvailable: resource.MustParse("100Mi")})
	if q := small[v1.ResourceMemory]; q.Value() != 0 {
		t.Errorf("allocatable memory of 10Mi less 100Mi = %s; want 0", q.String())
	}
}

func TestSystemInfo(t *testing.T) {
	info := fixtureMachine("1", 1, 1).systemInfo()
	if info.MachineID != "abc" || info.BootID != "boot-1" || info.OSImage != "Test OS 1" || info.KernelVersion != "6.1.0-test" || info.SystemUUID != "" {
		t.Errorf("system info %+v", info)
	}
}

func TestMachineAllocatable(t *testing.T) {
	got, err := MachineAllocatable(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage} {
		if q, ok := got[name]; !ok || q.Sign() <= 0 {
			t.Errorf("allocatable %s = %v, want a positive quantity", name, got[name])
		}
	}
}

// TestPressureOption: the eviction manager's conditions replace the
// machine's memory and disk pressure; PID pressure is still measured.
func TestPressureOption(t *testing.T) {
	a, _, _ := fakeAgent(t)
	a.m = fixtureMachine("2000000", 50, 990)
	memory, disk := true, false
	a.o.Pressure = func() (bool, bool) { return memory, disk }
	if h := a.machineHealth(t.Context()); !h.MemoryPressure || h.DiskPressure || !h.PIDPressure {
		t.Errorf("health %+v; want memory and PID pressure", h)
	}
	memory, disk = false, true
	if h := a.machineHealth(t.Context()); h.MemoryPressure || !h.DiskPressure {
		t.Errorf("health %+v; want disk pressure only", h)
	}
}
