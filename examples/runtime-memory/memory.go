package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// memory is the runtime: sandboxes, containers and images in maps, guarded
// by one mutex. Nothing runs; state changes only on calls.
type memory struct {
	now func() time.Time

	mu         sync.Mutex
	seq        int
	sandboxes  map[string]*Sandbox
	containers map[string]*Container
	images     map[string]string // name → resolved reference
	offline    bool              // refuse to pull
	events     hub
}

func newMemory(now func() time.Time) *memory {
	return &memory{
		now:        now,
		sandboxes:  map[string]*Sandbox{},
		containers: map[string]*Container{},
		images:     map[string]string{},
	}
}

// newID returns a fresh ID with the given prefix; mu is held.
func (m *memory) newID(prefix string) string {
	m.seq++
	return fmt.Sprintf("%s-%d", prefix, m.seq)
}

// RunSandbox creates a ready sandbox from sb, whose ID and state it sets.
func (m *memory) RunSandbox(_ context.Context, sb Sandbox) (string, error) {
	if sb.Name == "" || sb.UID == "" {
		return "", fmt.Errorf("sandbox metadata needs a name and a uid: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sb.ID = m.newID("sandbox")
	sb.State = SandboxReady
	sb.CreatedAt = m.now()
	stored := sb.clone()
	m.sandboxes[sb.ID] = &stored
	m.events.publish(Event{Type: EventSandboxReady, Time: sb.CreatedAt, SandboxID: sb.ID, Labels: sb.Labels})
	return sb.ID, nil
}

// StopSandbox exits every container of the sandbox and marks it not ready.
// Stopping an unknown or stopped sandbox succeeds.
func (m *memory) StopSandbox(_ context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("sandbox id is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sb, ok := m.sandboxes[id]
	if !ok {
		return nil
	}
	for _, c := range m.containersOf(id) {
		m.exit(c, 137, "Killed")
	}
	if sb.State != SandboxNotReady {
		sb.State = SandboxNotReady
		m.events.publish(Event{Type: EventSandboxNotReady, Time: m.now(), SandboxID: id, Labels: sb.Labels})
	}
	return nil
}

// RemoveSandbox removes the sandbox and its containers. Removing an unknown
// sandbox succeeds.
func (m *memory) RemoveSandbox(ctx context.Context, id string) error {
	if err := m.StopSandbox(ctx, id); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sb, ok := m.sandboxes[id]
	if !ok {
		return nil
	}
	for _, c := range m.containersOf(id) {
		m.remove(c)
	}
	delete(m.sandboxes, id)
	m.events.publish(Event{Type: EventSandboxRemoved, Time: m.now(), SandboxID: id, Labels: sb.Labels})
	return nil
}

// SandboxStatus returns one sandbox.
func (m *memory) SandboxStatus(_ context.Context, id string) (Sandbox, error) {
	if id == "" {
		return Sandbox{}, fmt.Errorf("sandbox id is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sb, ok := m.sandboxes[id]
	if !ok {
		return Sandbox{}, fmt.Errorf("sandbox %q: %w", id, errNotFound)
	}
	return sb.clone(), nil
}

// ListSandboxes returns the sandboxes f matches, oldest first.
func (m *memory) ListSandboxes(_ context.Context, f Filter) []Sandbox {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Sandbox
	for _, sb := range m.sandboxes {
		if f.matches(sb.ID, "", int(sb.State), sb.Labels) {
			out = append(out, sb.clone())
		}
	}
	slices.SortFunc(out, func(a, b Sandbox) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// CreateContainer creates a container from c in its sandbox, whose image
// must be present. It sets c's ID, state and image reference.
func (m *memory) CreateContainer(_ context.Context, c Container) (string, error) {
	switch {
	case c.SandboxID == "":
		return "", fmt.Errorf("sandbox id is empty: %w", errInvalid)
	case c.Name == "":
		return "", fmt.Errorf("container metadata needs a name: %w", errInvalid)
	case c.Image == "":
		return "", fmt.Errorf("container image is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sb, ok := m.sandboxes[c.SandboxID]
	if !ok {
		return "", fmt.Errorf("sandbox %q: %w", c.SandboxID, errNotFound)
	}
	ref, ok := m.imageRef(c.Image)
	if !ok {
		return "", fmt.Errorf("image %q: %w", c.Image, errNotFound)
	}
	c.ID = m.newID("container")
	c.State = ContainerCreated
	c.ImageRef = ref
	c.CreatedAt = m.now()
	if c.LogPath != "" && sb.LogDirectory != "" {
		c.LogPath = filepath.Join(sb.LogDirectory, c.LogPath)
	}
	stored := c.clone()
	m.containers[c.ID] = &stored
	m.events.publish(Event{Type: EventContainerCreated, Time: c.CreatedAt, SandboxID: c.SandboxID, ContainerID: c.ID, Labels: c.Labels})
	return c.ID, nil
}

// StartContainer runs a created container. Starting a running one succeeds;
// an exited one, or one whose sandbox is stopped, is errPrecondition.
func (m *memory) StartContainer(_ context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("container id is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.containers[id]
	if !ok {
		return fmt.Errorf("container %q: %w", id, errNotFound)
	}
	switch {
	case c.State == ContainerRunning:
		return nil
	case c.State == ContainerExited:
		return fmt.Errorf("container %q has exited: %w", id, errPrecondition)
	case m.sandboxes[c.SandboxID].State != SandboxReady:
		return fmt.Errorf("sandbox %q of container %q is stopped: %w", c.SandboxID, id, errPrecondition)
	}
	c.State = ContainerRunning
	c.StartedAt = m.now()
	m.events.publish(Event{Type: EventContainerStarted, Time: c.StartedAt, SandboxID: c.SandboxID, ContainerID: id, Labels: c.Labels})
	return nil
}

// StopContainer exits a container: at once with 137 when timeout is 0, as if
// it honoured the stop signal (exit code 0) otherwise. Stopping an exited or
// unknown container succeeds.
func (m *memory) StopContainer(_ context.Context, id string, timeout time.Duration) error {
	if id == "" {
		return fmt.Errorf("container id is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.containers[id]; ok {
		if timeout == 0 {
			m.exit(c, 137, "Killed")
		} else {
			m.exit(c, 0, "Completed")
		}
	}
	return nil
}

// RemoveContainer removes a container. Removing an unknown one succeeds.
func (m *memory) RemoveContainer(_ context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("container id is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.containers[id]; ok {
		m.exit(c, 137, "Killed")
		m.remove(c)
	}
	return nil
}

// ContainerStatus returns one container.
func (m *memory) ContainerStatus(_ context.Context, id string) (Container, error) {
	if id == "" {
		return Container{}, fmt.Errorf("container id is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.containers[id]
	if !ok {
		return Container{}, fmt.Errorf("container %q: %w", id, errNotFound)
	}
	return c.clone(), nil
}

// ReopenContainerLog reopens a running container's log file: nothing
// writes to it here, so it creates the file when the container has an
// absolute log path and it is missing. A container that is not running is
// errPrecondition and gets no file.
func (m *memory) ReopenContainerLog(_ context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("container id is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.containers[id]
	switch {
	case !ok:
		return fmt.Errorf("container %q: %w", id, errNotFound)
	case c.State != ContainerRunning:
		return fmt.Errorf("container %q is not running: %w", id, errPrecondition)
	case !filepath.IsAbs(c.LogPath):
		return nil
	}
	f, err := os.OpenFile(c.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("reopening the log of container %q: %w", id, err)
	}
	return f.Close()
}

// ListContainers returns the containers f matches, oldest first.
func (m *memory) ListContainers(_ context.Context, f Filter) []Container {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Container
	for _, c := range m.containers {
		if f.matches(c.ID, c.SandboxID, int(c.State), c.Labels) {
			out = append(out, c.clone())
		}
	}
	slices.SortFunc(out, func(a, b Container) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// containersOf returns the containers of a sandbox; mu is held.
func (m *memory) containersOf(sandboxID string) []*Container {
	var out []*Container
	for _, id := range slices.Sorted(maps.Keys(m.containers)) {
		if c := m.containers[id]; c.SandboxID == sandboxID {
			out = append(out, c)
		}
	}
	return out
}

// exit moves a created or running container to exited; mu is held.
func (m *memory) exit(c *Container, code int32, reason string) {
	if c.State == ContainerExited {
		return
	}
	c.State, c.ExitCode, c.Reason, c.FinishedAt = ContainerExited, code, reason, m.now()
	m.events.publish(Event{Type: EventContainerExited, Time: c.FinishedAt, SandboxID: c.SandboxID, ContainerID: c.ID, Labels: c.Labels})
}

// remove forgets a container; mu is held.
func (m *memory) remove(c *Container) {
	delete(m.containers, c.ID)
	m.events.publish(Event{Type: EventContainerRemoved, Time: m.now(), SandboxID: c.SandboxID, ContainerID: c.ID, Labels: c.Labels})
}
