package nodestats

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// procSystem reads /proc and statfs.
type procSystem struct{}

// userHZ is the unit of /proc/stat's times on Linux (USER_HZ, 100 on
// every architecture Linux exports it for).
const userHZ = 100

func (procSystem) Node() (NodeNumbers, error) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return NodeNumbers{}, err
	}
	n, err := parseProcStat(stat)
	if err != nil {
		return NodeNumbers{}, err
	}
	mem, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return NodeNumbers{}, err
	}
	if err := parseMeminfo(mem, &n); err != nil {
		return NodeNumbers{}, err
	}
	return n, nil
}

// parseProcStat reads the busy CPU time of all cores (every column of the
// "cpu" line but idle and iowait; guest time is inside user) and the boot
// time.
func parseProcStat(b []byte) (NodeNumbers, error) {
	var n NodeNumbers
	sc := bufio.NewScanner(bytes.NewReader(b))
	found := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 8 && f[0] == "cpu":
			var busy uint64
			for i, v := range f[1:min(len(f), 9)] {
				if i == 3 || i == 4 { // idle, iowait
					continue
				}
				x, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return n, fmt.Errorf("/proc/stat cpu line: %w", err)
				}
				busy += x
			}
			n.CPUNanos = busy * uint64(time.Second/userHZ)
			found = true
		case len(f) == 2 && f[0] == "btime":
			s, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return n, fmt.Errorf("/proc/stat btime: %w", err)
			}
			n.BootTime = time.Unix(s, 0)
		}
	}
	if !found {
		return n, fmt.Errorf("/proc/stat has no cpu line")
	}
	return n, sc.Err()
}

// parseMeminfo fills the memory numbers, in bytes.
func parseMeminfo(b []byte, n *NodeNumbers) error {
	fields := map[string]*uint64{"MemTotal:": &n.MemTotal, "MemFree:": &n.MemFree, "MemAvailable:": &n.MemAvailable, "Inactive(file):": &n.InactiveFile}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if p, ok := fields[f[0]]; ok {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return fmt.Errorf("/proc/meminfo %s %w", f[0], err)
			}
			*p = kb * 1024
		}
	}
	if n.MemTotal == 0 {
		return fmt.Errorf("/proc/meminfo has no MemTotal")
	}
	return sc.Err()
}

func (procSystem) Statfs(path string) (FsNumbers, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return FsNumbers{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	bs := uint64(st.Bsize)
	return FsNumbers{Capacity: st.Blocks * bs, Available: st.Bavail * bs, Used: (st.Blocks - st.Bfree) * bs,
		Inodes: st.Files, InodesFree: st.Ffree}, nil
}
