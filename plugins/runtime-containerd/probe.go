package main

import (
	"io/fs"
	"os"
)

// probeSocket tells whether containerd's socket exists at path. It is the
// whole probe until the plugin talks to containerd.
func probeSocket(path string) (bool, string) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return false, "containerd socket: " + err.Error()
	case fi.Mode().Type() != fs.ModeSocket:
		return false, "containerd endpoint " + path + " is not a socket"
	}
	return true, "containerd socket " + path + " exists"
}
