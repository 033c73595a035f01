package apivolumes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podhost/podhost/host/downwardapi"
)

// Token refresh, as the kubelet's: a token is renewed once 80 % of its
// lifetime has passed, and at the latest maxTokenAge after it was issued.
const (
	refreshFraction = 0.8
	maxTokenAge     = 24 * time.Hour
	// defaultTokenSeconds is the lifetime asked for when a projection
	// gives none (the API's default).
	defaultTokenSeconds = 3600
)

// token is a service-account token the volume holds, with when it is due
// for renewal.
type token struct {
	value     string
	refreshAt time.Time
}

// due reports whether the token must be asked for again at now.
func (t *token) due(now time.Time) bool { return t == nil || !now.Before(t.refreshAt) }

// refreshTime is when a token issued at issued, expiring at expires, is
// renewed.
func refreshTime(issued, expires time.Time) time.Time {
	at := issued.Add(time.Duration(float64(expires.Sub(issued)) * refreshFraction))
	if latest := issued.Add(maxTokenAge); at.After(latest) {
		at = latest
	}
	return at
}

// projected is one volume's sources, and the tokens it holds by
// projection index.
type projected struct {
	pod         *v1.Pod
	volume      string
	sources     []v1.VolumeProjection
	defaultMode int32
	// fsGroup is the pod's: the volume's files are given to that group.
	fsGroup *int64
	tokens  map[int]*token
}

// sources are where a volume's files come from besides the pod.
type sources struct {
	client      Client // nil: nowhere to read from
	allocatable func() (v1.ResourceList, error)
}

// hasDownwardAPI reports whether a source of the volume is the downward
// API, whose files change with the pod.
func (p *projected) hasDownwardAPI() bool {
	for _, s := range p.sources {
		if s.DownwardAPI != nil {
			return true
		}
	}
	return false
}

// sameMeta reports whether a and b render the same downward API fields
// that may change while a pod runs: its labels and annotations.
func sameMeta(a, b *v1.Pod) bool {
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations)
}

// files computes the volume's files at now, asking for the tokens that
// are due. A source that cannot be read fails the whole volume, naming
// it; an optional configMap or secret that does not exist gives no files.
func (p *projected) files(ctx context.Context, from sources, now time.Time) (map[string]File, error) {
	c := from.client
	out := map[string]File{}
	add := func(path string, data []byte, mode *int32) {
		m := p.defaultMode
		if mode != nil {
			m = *mode
		}
		out[path] = File{Data: data, Mode: fs.FileMode(m) & fs.ModePerm}
	}
	for i, src := range p.sources {
		field := fmt.Sprintf("sources[%d]", i)
		switch {
		case src.ServiceAccountToken != nil:
			t, err := p.token(ctx, c, i, src.ServiceAccountToken, now)
			if err != nil {
				return nil, fmt.Errorf("%s.serviceAccountToken: %w", field, err)
			}
			// With an fsGroup, a token is 0600 and the walk makes it
			// 0640, readable by the group and no one else, as in the
			// kubelet.
			var mode *int32
			if p.fsGroup != nil {
				mode = new(int32(0o600))
			}
			add(src.ServiceAccountToken.Path, []byte(t), mode)
		case src.ConfigMap != nil:
			cm, err := c.ConfigMap(ctx, p.pod.Namespace, src.ConfigMap.Name)
			if apierrors.IsNotFound(err) && src.ConfigMap.Optional != nil && *src.ConfigMap.Optional {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s.configMap: configmap %s/%s: %w", field, p.pod.Namespace, src.ConfigMap.Name, err)
			}
			data := map[string][]byte{}
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
			for k, v := range cm.BinaryData {
				data[k] = v
			}
			if err := project(data, src.ConfigMap.Items, src.ConfigMap.Optional, add); err != nil {
				return nil, fmt.Errorf("%s.configMap %s: %w", field, src.ConfigMap.Name, err)
			}
		case src.Secret != nil:
			s, err := c.Secret(ctx, p.pod.Namespace, src.Secret.Name)
			if apierrors.IsNotFound(err) && src.Secret.Optional != nil && *src.Secret.Optional {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s.secret: secret %s/%s: %w", field, p.pod.Namespace, src.Secret.Name, err)
			}
			if err := project(s.Data, src.Secret.Items, src.Secret.Optional, add); err != nil {
				return nil, fmt.Errorf("%s.secret %s: %w", field, src.Secret.Name, err)
			}
		case src.DownwardAPI != nil:
			for j, item := range src.DownwardAPI.Items {
				v, err := downwardValue(p.pod, item, from.allocatable)
				if err != nil {
					return nil, fmt.Errorf("%s.downwardAPI.items[%d]: %w", field, j, err)
				}
				add(filepath.Clean(item.Path), []byte(v), item.Mode)
			}
		default:
			return nil, fmt.Errorf("%s: unsupported projection (want serviceAccountToken, configMap, secret or downwardAPI)", field)
		}
	}
	return out, nil
}

// project adds data's keys, or only items when given, each under its
// path; a key the items name but data lacks is an error unless optional.
func project(data map[string][]byte, items []v1.KeyToPath, optional *bool, add func(string, []byte, *int32)) error {
	if len(items) == 0 {
		for k, v := range data {
			add(k, v, nil)
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional != nil && *optional {
				continue
			}
			return fmt.Errorf("no key %q", it.Key)
		}
		add(it.Path, v, it.Mode)
	}
	return nil
}

// token returns the token of projection i, asking the API server for a
// new one bound to the pod when it is due.
func (p *projected) token(ctx context.Context, c Client, i int, src *v1.ServiceAccountTokenProjection, now time.Time) (string, error) {
	if t := p.tokens[i]; !t.due(now) {
		return t.value, nil
	}
	secs := int64(defaultTokenSeconds)
	if src.ExpirationSeconds != nil {
		secs = *src.ExpirationSeconds
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &secs,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.pod.Name, UID: p.pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	sa := p.pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	resp, err := c.CreateToken(ctx, p.pod.Namespace, sa, req)
	if err != nil {
		return "", fmt.Errorf("requesting a token of service account %s/%s: %w", p.pod.Namespace, sa, err)
	}
	expires := resp.Status.ExpirationTimestamp.Time
	if expires.IsZero() {
		expires = now.Add(time.Duration(secs) * time.Second)
	}
	p.tokens[i] = &token{value: resp.Status.Token, refreshAt: refreshTime(now, expires)}
	return resp.Status.Token, nil
}

// downwardValue is a downwardAPI item's content: a field of the pod, or
// a resource of one of its containers, an unset limit being the node's
// allocatable.
func downwardValue(pod *v1.Pod, item v1.DownwardAPIVolumeFile, allocatable func() (v1.ResourceList, error)) (string, error) {
	switch {
	case item.FieldRef != nil:
		return downwardapi.VolumeField(pod, item.FieldRef.FieldPath)
	case item.ResourceFieldRef != nil:
		if allocatable == nil {
			return "", errors.New("resourceFieldRef: the node's allocatable resources are not known")
		}
		alloc, err := allocatable()
		if err != nil {
			return "", fmt.Errorf("resourceFieldRef: the node's allocatable resources: %w", err)
		}
		return downwardapi.VolumeResource(pod, item.ResourceFieldRef, alloc)
	}
	return "", errors.New("neither fieldRef nor resourceFieldRef is set")
}

// Client is what the volumes read: the API server, or the host's
// sources' ConfigMaps and Secrets (which issue no tokens).
type Client interface {
	ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*v1.Secret, error)
	CreateToken(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}
