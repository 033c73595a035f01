//go:build !linux

package mount

import "errors"

// FilesystemUsage is implemented on Linux only.
func FilesystemUsage(string) (Usage, error) {
	return Usage{}, errors.New("filesystem usage is only read on linux")
}
