//go:build !linux

package ownership

import "errors"

// Change is Linux-only.
func Change(dir string, o Options) error {
	return errors.New("changing volume ownership is supported on Linux only")
}
