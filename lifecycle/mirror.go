package lifecycle

import (
	"context"
	"log/slog"

	v1 "k8s.io/api/core/v1"
)

// ConfigHashAnnotation holds the hash of a static pod's content; its
// mirror pod carries the same value under ConfigMirrorAnnotation.
const ConfigHashAnnotation = "kubernetes.io/config.hash"

// MirrorPods creates and deletes the mirror pods of static pods in the API
// server (docs/lifecycle.md, mirror pods). Without one, static pods have
// no mirror.
type MirrorPods interface {
	MirrorPodDeleter
	// CreateMirrorPod creates the mirror of a static pod. A mirror that
	// exists already is not an error.
	CreateMirrorPod(ctx context.Context, static *v1.Pod) error
}

// mirrorTermination is what the pod worker says about static pods being
// stopped under a full name; an outdated mirror is kept while one is.
type mirrorTermination interface {
	IsPodForMirrorPodTerminatingByFullName(fullname string) bool
}

// IsMirrorPodOf reports whether mirror mirrors static: it carries the
// static pod's content hash.
func IsMirrorPodOf(mirror, static *v1.Pod) bool {
	if mirror == nil || static == nil {
		return false
	}
	hash, ok := static.Annotations[ConfigHashAnnotation]
	return ok && mirror.Annotations[ConfigMirrorAnnotation] == hash
}

// syncMirror keeps the mirror pod of a static pod current: a mirror that
// is being deleted or mirrors other content is deleted (unless a static
// pod under the same name still stops), and a missing one is created.
// Failures are logged, never returned: a static pod runs whether or not
// the API server shows it.
func (s *Syncer) syncMirror(ctx context.Context, pod, mirror *v1.Pod) {
	if s.Mirrors == nil || !IsStaticPod(pod) {
		return
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	name := PodFullName(pod)
	deleted := false
	if mirror != nil && (mirror.DeletionTimestamp != nil || !IsMirrorPodOf(mirror, pod)) {
		if t, ok := s.Pods.(mirrorTermination); ok && t.IsPodForMirrorPodTerminatingByFullName(name) {
			return
		}
		if err := s.Mirrors.DeleteMirrorPod(ctx, mirror); err != nil {
			log.Warn("deleting outdated mirror pod", "pod", name, "mirror", string(mirror.UID), "err", err)
			return
		}
		deleted = true
	}
	if mirror == nil || deleted {
		if err := s.Mirrors.CreateMirrorPod(ctx, pod); err != nil {
			log.Warn("creating mirror pod", "pod", name, "err", err)
		}
	}
}
