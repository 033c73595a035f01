package crisetup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one entry of /proc.
type process struct {
	pid, ppid int
	argv      []string
}

// processes lists the processes of the system. Entries that vanish while it
// reads are skipped.
func processes() ([]process, error) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []process
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		ppid, ok := parentPID(stat)
		if !ok {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		out = append(out, process{pid: pid, ppid: ppid, argv: argv})
	}
	return out, nil
}

// parentPID parses the fourth field of /proc/PID/stat; the second field, the
// command name in parentheses, may itself hold spaces and parentheses.
func parentPID(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

// isShimOf reports whether p is a containerd shim started by the containerd
// listening on socket: shims carry "-address SOCKET" on their command line.
func isShimOf(p process, socket string) bool {
	if len(p.argv) == 0 || !strings.HasPrefix(filepath.Base(p.argv[0]), "containerd-shim") {
		return false
	}
	i := slices.Index(p.argv, "-address")
	return i >= 0 && i+1 < len(p.argv) && p.argv[i+1] == socket
}

// shimsOf returns the PIDs of the shims of the instance on socket.
func shimsOf(socket string) ([]int, error) {
	procs, err := processes()
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, p := range procs {
		if isShimOf(p, socket) {
			pids = append(pids, p.pid)
		}
	}
	return pids, nil
}

// killShims kills every shim of the instance on socket and every process
// below it (the containers it supervises), each by PID. killed says whether
// there was any. A shim with processes below it is a leak, which the error
// reports; an idle one is not: containerd leaves one behind when a
// sandbox's start is cancelled after the shim daemon forked, and no pod
// runs under it.
func killShims(socket string) (killed bool, err error) {
	procs, err := processes()
	if err != nil {
		return false, err
	}
	busy, idle, victims := leftovers(procs, socket)
	if len(victims) == 0 {
		return false, nil
	}
	for _, pid := range victims {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	shims := append(slices.Clone(busy), idle...)
	switch {
	case !waitGone(victims, 5*time.Second):
		return true, fmt.Errorf("leftover shims %v of %s survived SIGKILL", shims, socket)
	case len(busy) > 0:
		return true, fmt.Errorf("killed leftover shims %v of %s and their %d processes", shims, socket, len(victims)-len(shims))
	}
	return true, nil
}

// leftovers finds the shims of the instance on socket among procs: busy
// ones have processes below them, idle ones none. victims are the shims and
// their descendants, descendants first, so that a shim cannot restart or
// reap them while they are killed.
func leftovers(procs []process, socket string) (busy, idle, victims []int) {
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	for _, p := range procs {
		if !isShimOf(p, socket) {
			continue
		}
		if len(children[p.pid]) == 0 {
			idle = append(idle, p.pid)
		} else {
			busy = append(busy, p.pid)
		}
		stack := []int{p.pid}
		var tree []int
		for len(stack) > 0 {
			pid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			tree = append(tree, pid)
			stack = append(stack, children[pid]...)
		}
		slices.Reverse(tree)
		victims = append(victims, tree...)
	}
	return busy, idle, victims
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}

// waitGone polls until none of pids is alive or d has passed.
func waitGone(pids []int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		alive := slices.ContainsFunc(pids, processAlive)
		if !alive {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// unmountUnder detaches every mount at or below dir, deepest first.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	var targets []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		target := unescapeMount(fields[4])
		if target == dir || strings.HasPrefix(target, dir+"/") {
			targets = append(targets, target)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read mounts: %w", err)
	}
	slices.SortFunc(targets, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, t := range targets {
		if err := syscall.Unmount(t, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", t, err))
		}
	}
	if len(targets) > 0 && len(errs) == 0 {
		return fmt.Errorf("unmounted %d leftover mounts under %s", len(targets), dir)
	}
	return errors.Join(errs...)
}

// unescapeMount undoes the octal escapes (\040 for space, …) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
