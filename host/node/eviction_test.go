package node

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/podhost/podhost/host/eviction"
	"github.com/podhost/podhost/host/nodestats"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func TestEvictionThresholds(t *testing.T) {
	got, err := evictionThresholds(map[string]string{"nodefs.available": "20%", "imagefs.available": "0%", "memory.available": "1Gi"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, th := range got {
		v := th.Signal + "="
		if th.Quantity != nil {
			v += th.Quantity.String()
		} else {
			v += strconv.FormatFloat(th.Percentage, 'g', -1, 64) + "%"
		}
		names = append(names, v)
	}
	if want := "nodefs.inodesFree=5%,memory.available=1Gi,nodefs.available=20%"; strings.Join(names, ",") != want {
		t.Errorf("thresholds %s, want %s", strings.Join(names, ","), want)
	}
	if _, err := evictionThresholds(map[string]string{"memory.free": "1Gi"}); err == nil || !strings.Contains(err.Error(), "evictionHard") {
		t.Errorf("unknown signal: %v", err)
	}
}

type fakeMachine struct {
	node nodestats.NodeNumbers
	fs   map[string]nodestats.FsNumbers
}

func (f fakeMachine) Node() (nodestats.NodeNumbers, error) { return f.node, nil }
func (f fakeMachine) Statfs(p string) (nodestats.FsNumbers, error) {
	if n, ok := f.fs[p]; ok {
		return n, nil
	}
	return nodestats.FsNumbers{}, errors.New("no " + p)
}

// TestPressureSignals: memory.available is MemTotal less the working set
// (in use less inactive file), nodefs the root's statfs, imagefs the
// runtime's image filesystem when it names one.
func TestPressureSignals(t *testing.T) {
	sys := fakeMachine{
		node: nodestats.NodeNumbers{MemTotal: 1000, MemFree: 100, InactiveFile: 300},
		fs: map[string]nodestats.FsNumbers{"/root": {Capacity: 100, Available: 7, Inodes: 50, InodesFree: 2},
			"/images": {Capacity: 200, Available: 20}},
	}
	signals := pressureSignals(sys, "/root")
	obs, err := signals(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := eviction.Observations{
		eviction.SignalMemoryAvailable:  {Available: 400, Capacity: 1000},
		eviction.SignalNodeFsAvailable:  {Available: 7, Capacity: 100},
		eviction.SignalNodeFsInodesFree: {Available: 2, Capacity: 50},
	}
	if len(obs) != len(want) {
		t.Errorf("observations %v, want %v", obs, want)
	}
	for k, v := range want {
		if obs[k] != v {
			t.Errorf("%s: %+v, want %+v", k, obs[k], v)
		}
	}
	obs, err = signals(&runtimev1.ListStatsResponse{ImageFilesystems: []*runtimev1.FilesystemUsage{{Mountpoint: "/images"}}})
	if err != nil || obs[eviction.SignalImageFsAvailable] != (eviction.Observation{Available: 20, Capacity: 200}) {
		t.Errorf("imagefs: %v %v", obs, err)
	}
	if _, err := signals(&runtimev1.ListStatsResponse{ImageFilesystems: []*runtimev1.FilesystemUsage{{Mountpoint: "/gone"}}}); err == nil {
		t.Error("no error for an imagefs statfs cannot read")
	}
}
