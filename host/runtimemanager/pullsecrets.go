package runtimemanager

import (
	"context"
	"errors"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/registryauth"
	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// EventFailedToRetrieveImagePullSecret is the kubelet's warning when a
// pull failed and some of the pod's imagePullSecrets could not be read.
const EventFailedToRetrieveImagePullSecret = "FailedToRetrieveImagePullSecret"

// errNoSecrets: the Manager was given nowhere to read Secrets from.
var errNoSecrets = errors.New("no source of secrets")

// pullAuth is what EnsureImage of image needs from pod's imagePullSecrets,
// read where the pod's env reads its Secrets (the API server with the
// node's credentials, or the sources' Secrets): the credentials whose
// registry key matches image, in the order to try them (registryauth),
// and the names of the Secrets that could not be read, which, as the
// kubelet's, do not fail the pull. A Secret whose docker config is
// unreadable does: the error names it and its key. An image already
// present under IfNotPresent is used without checking that these
// credentials could pull it (the kubelet's KubeletEnsureSecretPulledImages
// is not done).
func (m *Manager) pullAuth(ctx context.Context, pod *v1.Pod, image string) ([]*runtimev1.RegistryAuth, []string, error) {
	if len(pod.Spec.ImagePullSecrets) == 0 {
		return nil, nil, nil
	}
	var src EnvObjects
	if m.opts.EnvObjects != nil {
		src = m.opts.EnvObjects(pod)
	}
	var keyring registryauth.Keyring
	var missing []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue // the API allows an empty name; the kubelet passes over it
		}
		var s *v1.Secret
		err := errNoSecrets
		if src != nil {
			s, err = src.Secret(ctx, pod.Namespace, ref.Name)
		}
		if err != nil {
			m.log.Debug("image pull secret not read", "pod", pod.Namespace+"/"+pod.Name, "secret", ref.Name, "err", err)
			missing = append(missing, ref.Name)
			continue
		}
		if err := keyring.Add(pod.Namespace+"/"+ref.Name, s); err != nil {
			return nil, missing, err
		}
	}
	var out []*runtimev1.RegistryAuth
	for _, c := range keyring.Lookup(image) {
		out = append(out, &runtimev1.RegistryAuth{Username: c.Username, Password: c.Password})
	}
	return out, missing, nil
}

// missingPullSecretsEvent records, after a failed pull, which of the pod's
// pull secrets could not be read, in the kubelet's words.
func (m *Manager) missingPullSecretsEvent(pod *v1.Pod, missing []string) {
	if len(missing) == 0 {
		return
	}
	m.event(pod, lifecycle.EventWarning, EventFailedToRetrieveImagePullSecret,
		"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(missing, ", "))
}
