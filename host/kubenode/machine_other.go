//go:build !linux

package kubenode

import (
	"errors"
	"os"
	"runtime"
)

var errNotLinux = errors.New("measured on Linux only")

// hostMachine measures this machine; off Linux only the CPU count and
// files.
func hostMachine() machine {
	return machine{
		readFile: os.ReadFile,
		statfs:   func(string) (fsUsage, error) { return fsUsage{}, errNotLinux },
		numCPU:   runtime.NumCPU,
		procs:    func() (uint64, error) { return 0, errNotLinux },
		kernel:   func() (string, error) { return "", errNotLinux },
	}
}
