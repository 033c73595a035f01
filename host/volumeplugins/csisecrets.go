package volumeplugins

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
)

// SecretReader reads the Secret namespace/name for a volume of pod: from
// where that pod's objects are (the API server for a pod of the API
// server's, the host's sources for any other).
type SecretReader func(ctx context.Context, pod types.UID, namespace, name string) (*v1.Secret, error)

// errNoSecretReader is why a host built without a SecretReader fails a
// volume that names a Secret.
var errNoSecretReader = errors.New("this host reads no Secrets")

// nodeSecrets are the secrets of a CSI NodeStageVolume or
// NodePublishVolume whose source names ref (what names the field: the
// kubelet's "NodeStageSecretRef", "NodePublishSecretRef"): the Secret's
// data, as the kubelet passes them; none without a ref. A Secret that
// cannot be read fails the call before the plugin is asked, so nothing
// changed (transient) and the volume manager retries it, the error
// naming the Secret as the kubelet's does. The values are never put in
// an error or a log.
func (c *csiVolumes) nodeSecrets(ctx context.Context, what string, pod types.UID, ref *v1.SecretReference) (map[string]string, error) {
	if ref == nil {
		return nil, nil
	}
	read := c.secret
	if read == nil {
		read = func(context.Context, types.UID, string, string) (*v1.Secret, error) { return nil, errNoSecretReader }
	}
	s, err := read(ctx, pod, ref.Namespace, ref.Name)
	if err != nil {
		return nil, &classifiedError{class: volumemanager.Transient, err: fmt.Errorf("fetching %s %s/%s failed: %w", what, ref.Namespace, ref.Name, err)}
	}
	out := make(map[string]string, len(s.Data))
	for k, val := range s.Data {
		out[k] = string(val)
	}
	return out, nil
}
