//go:build !linux

package scsi

import "errors"

// Size is Linux only.
func Size(string) (int64, error) { return 0, errors.New("block device size is only read on linux") }
