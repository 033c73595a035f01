package node

import (
	"context"
	"fmt"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	"github.com/podhost/podhost/host/volumeplugins"
	"github.com/podhost/podhost/sources"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
// volumes, which read each pod's objects where objects.go says.
func (n *Node) newAPIVolumes() *apivolumes.Volumes {
	cfg := apivolumes.Config{Root: n.cfg.RootDir, Pod: n.desired.Pod, Allocatable: n.nodeAllocatable, Clock: n.clock, Log: n.log.Named("volumes")}
	cfg.Client = n.podObjects().volumes
	return apivolumes.New(cfg)
}

// volumeSecrets reads the Secrets CSI volumes name (nodeStageSecretRef,
// nodePublishSecretRef) where the pod's other objects are read: from the
// API server with the node's credentials for its pods (the Node
// authorizer lets a node get the Secrets its pods and their
// PersistentVolumes name), from the sources' Secrets for the others.
func (n *Node) volumeSecrets() volumeplugins.SecretReader {
	objects := n.podObjects()
	return func(ctx context.Context, uid types.UID, namespace, name string) (*v1.Secret, error) {
		pod, ok := n.desired.Pod(uid)
		if !ok {
			return nil, fmt.Errorf("pod %s is not desired: its Secrets are not read", uid)
		}
		return objects.volumes(pod).Secret(ctx, namespace, name)
	}
}

// envObjects says where the ConfigMaps and Secrets of a pod's env are
// read (objects.go).
func (n *Node) envObjects() func(*v1.Pod) runtimemanager.EnvObjects {
	return n.podObjects().env
}

// podObjects chooses where each pod's ConfigMaps and Secrets are read:
// the API server for its pods, the sources' objects for the others.
func (n *Node) podObjects() podObjects {
	p := podObjects{local: localReader{staticObjects: &n.objects}, origin: func(pod *v1.Pod) (sources.Origin, bool) {
		return n.desired.nextOrigin(pod.UID)
	}}
	if n.cfg.Kubernetes.enabled() {
		api := apiVolumeClient{n.cfg.Kubernetes.Client}
		p.api = &api
		if n.apiEnv == nil {
			n.apiEnv = runtimemanager.LastGood(api)
		}
		p.apiEnv = n.apiEnv
		p.local.services = n.apiEnv
	}
	return p
}
