package scsi

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Size returns the size in bytes of the block device at path, read with
// the BLKGETSIZE64 ioctl, or of a regular file.
func Size(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("inspecting %s: %w", path, err)
	}
	if fi.Mode().IsRegular() {
		return fi.Size(), nil
	}
	if fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		return 0, fmt.Errorf("%s is not a block device", path)
	}
	var size uint64
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&size))); errno != 0 {
		return 0, fmt.Errorf("reading the size of %s: %w", path, errno)
	}
	return int64(size), nil
}
