package state

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockRetry is how often lockFile retries a held lock.
const lockRetry = 50 * time.Millisecond

// lockFile takes the exclusive flock bbolt itself takes on the database,
// waiting at most timeout for another holder to let go.
func lockFile(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return fmt.Errorf("locking: %w", err)
		case time.Now().After(deadline):
			return fmt.Errorf("%w (waited %s)", ErrLocked, timeout)
		}
		time.Sleep(lockRetry)
	}
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
