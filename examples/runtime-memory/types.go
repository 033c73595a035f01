package main

import (
	"errors"
	"maps"
	"time"
)

// Errors of the memory runtime; server.go maps them to gRPC codes.
var (
	errInvalid      = errors.New("invalid argument")
	errNotFound     = errors.New("not found")
	errPrecondition = errors.New("not allowed in this state")
)

// SandboxState is whether a sandbox is running.
type SandboxState int

// The sandbox states.
const (
	SandboxReady SandboxState = iota + 1
	SandboxNotReady
)

// ContainerState is where a container is in its life.
type ContainerState int

// The container states.
const (
	ContainerCreated ContainerState = iota + 1
	ContainerRunning
	ContainerExited
)

// Sandbox is one pod sandbox.
type Sandbox struct {
	ID                   string
	Name, Namespace, UID string
	Attempt              uint32
	State                SandboxState
	CreatedAt            time.Time
	LogDirectory         string
	Labels, Annotations  map[string]string
}

// Container is one container of a sandbox.
type Container struct {
	ID, SandboxID                    string
	Name                             string
	Attempt                          uint32
	State                            ContainerState
	Image, ImageRef                  string
	CreatedAt, StartedAt, FinishedAt time.Time
	ExitCode                         int32
	Reason                           string
	LogPath                          string
	Labels, Annotations              map[string]string
}

// Filter selects sandboxes or containers; zero fields match anything.
type Filter struct {
	ID        string
	SandboxID string // containers only
	State     int    // a SandboxState or ContainerState; 0 for any
	Labels    map[string]string
}

func (f Filter) matches(id, sandboxID string, state int, labels map[string]string) bool {
	if f.ID != "" && f.ID != id || f.SandboxID != "" && f.SandboxID != sandboxID || f.State != 0 && f.State != state {
		return false
	}
	for k, v := range f.Labels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func (s *Sandbox) clone() Sandbox {
	c := *s
	c.Labels, c.Annotations = maps.Clone(s.Labels), maps.Clone(s.Annotations)
	return c
}

func (c *Container) clone() Container {
	out := *c
	out.Labels, out.Annotations = maps.Clone(c.Labels), maps.Clone(c.Annotations)
	return out
}
