package node

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/host/eviction"
	"github.com/podhost/podhost/host/nodestats"
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

// TestPressureSignals: memory.available is MemTotal less the working set
// (in use less inactive file), nodefs the root's filesystem, imagefs the
// runtime's image filesystem when it is known, all from nodestats' last
// reading.
func TestPressureSignals(t *testing.T) {
	at := time.Unix(5000, 0)
	s := nodestats.Sample{Time: at,
		Node: nodestats.NodeNumbers{MemTotal: 1000, MemFree: 100, InactiveFile: 300,
			RootFs: nodestats.FsNumbers{Capacity: 100, Available: 7, Inodes: 50, InodesFree: 2}},
	}
	signals := pressureSignals(func() (nodestats.Sample, error) { return s, nil })
	obs, err := signals(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := eviction.Observations{
		eviction.SignalMemoryAvailable:  {Available: 400, Capacity: 1000, At: at},
		eviction.SignalNodeFsAvailable:  {Available: 7, Capacity: 100, At: at},
		eviction.SignalNodeFsInodesFree: {Available: 2, Capacity: 50, At: at},
	}
	if len(obs) != len(want) {
		t.Errorf("observations %v, want %v", obs, want)
	}
	for k, v := range want {
		if obs[k] != v {
			t.Errorf("%s: %+v, want %+v", k, obs[k], v)
		}
	}
	s.ImageFs = nodestats.FsNumbers{Capacity: 200, Available: 20}
	if obs, err = signals(nil); err != nil || obs[eviction.SignalImageFsAvailable] != (eviction.Observation{Available: 20, Capacity: 200, At: at}) {
		t.Errorf("imagefs: %v %v", obs, err)
	}
	if _, err := pressureSignals(func() (nodestats.Sample, error) { return nodestats.Sample{}, nodestats.ErrNotGathered })(nil); err == nil {
		t.Error("no error before the first reading")
	}
}
