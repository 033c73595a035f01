//go:build !linux

package main

import "errors"

// statfs is implemented on Linux only.
func statfs(string) (Usage, error) {
	return Usage{}, errors.New("filesystem usage is only read on linux")
}
