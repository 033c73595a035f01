package volumemanager

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine of the driver is
// left running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
