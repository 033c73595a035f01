//go:build !linux

package state

import (
	"os"
	"time"
)

// lockFile is a no-op off Linux; bbolt's own lock still guards the file.
func lockFile(*os.File, time.Duration) error { return nil }

func unlockFile(*os.File) {}
