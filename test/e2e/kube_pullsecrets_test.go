package e2e

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeImagePullSecrets: in Kubernetes mode a pod's imagePullSecrets
// are read from the API server with the node's credentials (the Node
// authorizer allows those its pods name): with them the pod pulls from the
// registry that wants basic auth and runs; without them it waits in
// ErrImagePull or ImagePullBackOff; naming a missing Secret is the
// FailedToRetrieveImagePullSecret event in the API server.
func TestKubeImagePullSecrets(t *testing.T) {
	k := startKubeHost(t)
	reg := startAuthRegistry(t, "puller", "pull-s3cret")
	reg.trustFrom(t, k.ctrd)
	image := reg.pushBusybox(t, "private/busybox", "1")
	auth := base64.StdEncoding.EncodeToString([]byte("puller:pull-s3cret"))
	if _, err := k.cluster.Client.CoreV1().Secrets("default").Create(t.Context(), &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "regcred"}, Type: v1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{v1.DockerConfigJsonKey: fmt.Appendf(nil, `{"auths": {%q: {"auth": %q}}}`, reg.host, auth)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubePrivate := func(name string, secrets ...string) *v1.Pod {
		p := privatePod(name, image, secrets...)
		p.Spec.NodeName = kubeNode
		no := false
		p.Spec.AutomountServiceAccountToken = &no
		return p
	}
	k.create(kubePrivate("anonymous"))
	k.create(kubePrivate("missing", "nosuch"))
	k.create(kubePrivate("private", "regcred"))

	k.waitAPIRunning("private", 120*time.Second)
	for _, name := range []string{"anonymous", "missing"} {
		p := k.waitAPIPod(name, 90*time.Second, "ErrImagePull or ImagePullBackOff", pullFailed)
		if msg := containerStatus(p, "main").State.Waiting.Message; !strings.Contains(strings.ToLower(msg), "unauthorized") {
			t.Errorf("%s: message %q; want the registry's 401", name, msg)
		}
	}
	poll(t, 60*time.Second, func() bool {
		list, err := k.cluster.Client.CoreV1().Events("default").List(t.Context(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Pod,involvedObject.name=missing,reason=FailedToRetrieveImagePullSecret"})
		return err == nil && len(list.Items) > 0 && strings.Contains(list.Items[0].Message, "(nosuch)")
	}, func() string { return "no FailedToRetrieveImagePullSecret event of pod missing in the API server" })
}
