//go:build !linux

package volumetest

import "testing"

// mountsUnder finds no mounts: the kit reads mount tables on Linux only.
func mountsUnder(string) ([]string, error) { return nil, nil }

// unmountUnder does nothing off Linux.
func unmountUnder(*testing.T, string) {}
