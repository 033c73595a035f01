package main

import (
	"time"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func sandboxToProto(sb Sandbox) *runtimev1.Sandbox {
	return &runtimev1.Sandbox{
		Id:          sb.ID,
		Metadata:    &runtimev1.SandboxMetadata{Name: sb.Name, Namespace: sb.Namespace, Uid: sb.UID, Attempt: sb.Attempt},
		State:       runtimev1.SandboxState(sb.State),
		CreatedAt:   unixNano(sb.CreatedAt),
		Labels:      sb.Labels,
		Annotations: sb.Annotations,
	}
}

func containerToProto(c Container) *runtimev1.Container {
	return &runtimev1.Container{
		Id:          c.ID,
		SandboxId:   c.SandboxID,
		Metadata:    &runtimev1.ContainerMetadata{Name: c.Name, Attempt: c.Attempt},
		State:       runtimev1.ContainerState(c.State),
		Image:       c.Image,
		ImageRef:    c.ImageRef,
		CreatedAt:   unixNano(c.CreatedAt),
		StartedAt:   unixNano(c.StartedAt),
		FinishedAt:  unixNano(c.FinishedAt),
		ExitCode:    c.ExitCode,
		Reason:      c.Reason,
		Labels:      c.Labels,
		Annotations: c.Annotations,
		LogPath:     c.LogPath,
	}
}

func imageToProto(img Image) *runtimev1.Image {
	return &runtimev1.Image{Id: img.Ref, RepoTags: []string{img.Name}}
}

func eventToProto(ev Event) *runtimev1.Event {
	return &runtimev1.Event{
		Type:        runtimev1.EventType(ev.Type),
		Timestamp:   unixNano(ev.Time),
		SandboxId:   ev.SandboxID,
		ContainerId: ev.ContainerID,
		Labels:      ev.Labels,
	}
}

// unixNano is t in Unix nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
