package node

import (
	"context"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// apiVolumeClient reads what projected, configMap and secret volumes and
// containers' env from ConfigMaps and Secrets need from the API server
// with the node's credentials: the Node authorizer lets a node get the
// config maps and secrets its pods name and request tokens of their
// service accounts bound to them.
type apiVolumeClient struct{ client kubernetes.Interface }

func (c apiVolumeClient) ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error) {
	return c.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (c apiVolumeClient) Secret(ctx context.Context, namespace, name string) (*v1.Secret, error) {
	return c.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (c apiVolumeClient) Services(ctx context.Context, namespace string) ([]v1.Service, error) {
	list, err := c.client.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func (c apiVolumeClient) CreateToken(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return c.client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, req, metav1.CreateOptions{})
}

// newAPIVolumes builds the projected, configMap, secret and downwardAPI
// volumes; in standalone mode they have no client and the publish of
// every volume but one of only downward API items fails naming the
// volume.
func (n *Node) newAPIVolumes() *apivolumes.Volumes {
	cfg := apivolumes.Config{Root: n.cfg.RootDir, Pod: n.desired.Pod, Allocatable: n.nodeAllocatable, Clock: n.clock, Log: n.log.Named("volumes")}
	if n.cfg.Kubernetes.enabled() {
		cfg.Client = apiVolumeClient{n.cfg.Kubernetes.Client}
	}
	return apivolumes.New(cfg)
}

// envObjects reads the ConfigMaps and Secrets of containers' env; nil in
// standalone mode, where admission refuses such env.
func (n *Node) envObjects() runtimemanager.EnvObjects {
	if !n.cfg.Kubernetes.enabled() {
		return nil
	}
	return apiVolumeClient{n.cfg.Kubernetes.Client}
}
