package kubenode

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// hostMachine measures this machine.
func hostMachine() machine {
	return machine{
		readFile: os.ReadFile,
		statfs: func(path string) (fsUsage, error) {
			var st unix.Statfs_t
			if err := unix.Statfs(path, &st); err != nil {
				return fsUsage{}, err
			}
			bs := uint64(st.Bsize)
			return fsUsage{total: st.Blocks * bs, available: st.Bavail * bs}, nil
		},
		numCPU: runtime.NumCPU,
		procs: func() (uint64, error) {
			var si unix.Sysinfo_t
			if err := unix.Sysinfo(&si); err != nil {
				return 0, err
			}
			return uint64(si.Procs), nil
		},
		kernel: func() (string, error) {
			var u unix.Utsname
			if err := unix.Uname(&u); err != nil {
				return "", err
			}
			return unix.ByteSliceToString(u.Release[:]), nil
		},
	}
}
