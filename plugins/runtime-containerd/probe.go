package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Probe tells whether containerd can serve: its socket exists, CRI answers
// Version and Status, and RuntimeReady is true. The message says which
// step failed, or names the containerd that is ready. NetworkReady is not
// required: host-network pods run without CNI.
func (r *criRuntime) Probe(ctx context.Context) (bool, string) {
	b := r.current.Load()
	if b == nil {
		return false, "not configured"
	}
	if ok, msg := probeSocket(b.cfg.socketPath); !ok {
		return false, msg
	}
	v, err := r.Version(ctx)
	if err != nil {
		return false, fmt.Sprintf("containerd at %s does not answer: %v", b.cfg.socketPath, err)
	}
	conds, err := r.Status(ctx)
	if err != nil {
		return false, fmt.Sprintf("containerd at %s does not report its status: %v", b.cfg.socketPath, err)
	}
	name := fmt.Sprintf("%s %s (CRI %s)", v.RuntimeName, v.RuntimeVersion, v.RuntimeAPIVersion)
	return runtimeReady(name, conds)
}

// runtimeReady reads the RuntimeReady condition of the runtime name.
func runtimeReady(name string, conds []Condition) (bool, string) {
	for _, c := range conds {
		if c.Type != "RuntimeReady" {
			continue
		}
		if c.Status {
			return true, name + " is ready"
		}
		why := strings.TrimPrefix(strings.Join([]string{c.Reason, c.Message}, ": "), ": ")
		if why == "" {
			why = "no reason given"
		}
		return false, fmt.Sprintf("%s is not ready: RuntimeReady is false (%s)", name, strings.TrimSuffix(why, ": "))
	}
	return false, name + " does not report RuntimeReady"
}

// probeSocket tells whether a socket exists at path.
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
