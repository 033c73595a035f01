package scsitest

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// misuseTool is the name under which the fake tools log a misuse (see
// Misuses) in the call log.
const misuseTool = "misuse"

// Misuses are the calls of the fake tools made while the devices they
// remove were still mounted (a logout or a multipath flush before the
// unmount), one description each. The real tools would go ahead and pull
// the device from under its filesystem; the fakes go ahead too, and note it.
func (f *Fake) Misuses() []string {
	var out []string
	for _, c := range f.Calls(misuseTool) {
		out = append(out, strings.Join(c, " "))
	}
	return out
}

// noteMisuse logs a misuse for Misuses.
func (f *Fake) noteMisuse(format string, args ...any) {
	log, err := os.OpenFile(f.logFile(), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer log.Close()
	fmt.Fprintln(log, misuseTool+"\t"+strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " "))
}

// mountedAt returns the mount points of the device file dev (a link to a
// loop device is followed), from /proc/self/mountinfo; none when dev is
// not a device.
func mountedAt(dev string) []string {
	var st syscall.Stat_t
	if dev == "" || syscall.Stat(dev, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFBLK {
		return nil
	}
	id := fmt.Sprintf("%d:%d", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))) // Rdev is not uint64 everywhere
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[2] == id {
			points = append(points, f[4])
		}
	}
	return points
}

// MountOptions returns the options of the mount at path from
// /proc/self/mountinfo: the mount point's (rw,noatime) and the
// filesystem's (commit=30); ok is false when path is no mount point.
func MountOptions(path string) (mount, super string, ok bool) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[4] != path {
			continue
		}
		// After the optional fields, "-", the type, the source and the
		// filesystem's options.
		for i := 6; i+3 < len(f); i++ {
			if f[i] == "-" {
				mount, super, ok = f[5], f[i+3], true
			}
		}
	}
	return mount, super, ok
}
