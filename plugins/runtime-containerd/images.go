package main

import (
	"context"
	"fmt"
	"strings"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// pullPolicyNames maps the config's names to policies.
var pullPolicyNames = map[string]PullPolicy{
	"IfNotPresent": PullIfNotPresent,
	"Always":       PullAlways,
	"Never":        PullNever,
}

// EnsureImage makes image present according to policy (PullDefault takes
// the config's) and returns its ID, which CreateContainer accepts, and
// whether it was pulled. An absent image under Never is NOT_FOUND; a failed
// pull is classified like any CRI error (containerd reports a registry's
// "not found" as NOT_FOUND, an unreachable registry as UNKNOWN). A pull
// tries auths in order, as the kubelet does, and anonymously when there
// are none; when all fail, the error is the last one's class with every
// attempt's message.
func (r *criRuntime) EnsureImage(ctx context.Context, image string, policy PullPolicy, auths []RegistryAuth) (string, bool, error) {
	if image == "" {
		return "", false, fmt.Errorf("%w: image is required", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return "", false, err
	}
	if policy == PullDefault {
		policy = pullPolicyNames[b.cfg.ImagePullPolicy]
	}
	ctx, cancel := b.imageCall(ctx)
	defer cancel()
	if policy != PullAlways {
		img, present, err := b.imageStatus(ctx, image)
		switch {
		case err != nil:
			return "", false, err
		case present:
			return img.ID, false, nil
		case policy == PullNever:
			return "", false, fmt.Errorf("%w: image %s is not present and the pull policy is Never", errNotFound, image)
		}
	}
	if len(auths) == 0 {
		resp, err := b.img.PullImage(ctx, &criapi.PullImageRequest{Image: &criapi.ImageSpec{Image: image}})
		if err != nil {
			return "", false, criError("pull image "+image, err)
		}
		return resp.GetImageRef(), true, nil
	}
	var failed pullErrors
	for i, a := range auths {
		resp, err := b.img.PullImage(ctx, &criapi.PullImageRequest{Image: &criapi.ImageSpec{Image: image}, Auth: &criapi.AuthConfig{
			Username: a.Username, Password: a.Password, IdentityToken: a.IdentityToken, RegistryToken: a.RegistryToken, ServerAddress: a.ServerAddress}})
		if err == nil {
			return resp.GetImageRef(), true, nil
		}
		failed = append(failed, criError(fmt.Sprintf("pull image %s with credentials %d of %d", image, i+1, len(auths)), err))
	}
	return "", false, failed
}

// pullErrors are the failures of one pull with each set of credentials:
// every message, the class of the last.
type pullErrors []error

func (e pullErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e pullErrors) Unwrap() error { return e[len(e)-1] }

// ImageStatus reports an image; present is false when it is absent.
func (r *criRuntime) ImageStatus(ctx context.Context, image string) (Image, bool, error) {
	if image == "" {
		return Image{}, false, fmt.Errorf("%w: image is required", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return Image{}, false, err
	}
	ctx, cancel := b.imageCall(ctx)
	defer cancel()
	return b.imageStatus(ctx, image)
}

func (b *backend) imageStatus(ctx context.Context, image string) (Image, bool, error) {
	resp, err := b.img.ImageStatus(ctx, &criapi.ImageStatusRequest{Image: &criapi.ImageSpec{Image: image}})
	if err = criError("image status "+image, err); isNotFound(err) {
		return Image{}, false, nil
	} else if err != nil {
		return Image{}, false, err
	}
	if resp.GetImage() == nil {
		return Image{}, false, nil
	}
	return imageFromCRI(resp.GetImage()), true, nil
}

// ListImages lists the images present.
func (r *criRuntime) ListImages(ctx context.Context) ([]Image, error) {
	b, err := r.backend()
	if err != nil {
		return nil, err
	}
	ctx, cancel := b.imageCall(ctx)
	defer cancel()
	resp, err := b.img.ListImages(ctx, &criapi.ListImagesRequest{})
	if err != nil {
		return nil, criError("list images", err)
	}
	var out []Image
	for _, img := range resp.GetImages() {
		out = append(out, imageFromCRI(img))
	}
	return out, nil
}

// RemoveImage removes an image; an absent one is already removed. containerd
// removes an image that containers still use, so the plugin refuses first.
func (r *criRuntime) RemoveImage(ctx context.Context, image string) error {
	if image == "" {
		return fmt.Errorf("%w: image is required", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return err
	}
	ctx, cancel := b.imageCall(ctx)
	defer cancel()
	img, present, err := b.imageStatus(ctx, image)
	if err != nil || !present {
		return err
	}
	containers, err := b.listContainers(ctx, nil)
	if err != nil {
		return err
	}
	for _, c := range containers {
		if c.GetImageRef() == img.ID {
			return fmt.Errorf("%w: image %s is used by container %s", errPrecondition, image, c.GetId())
		}
	}
	_, err = b.img.RemoveImage(ctx, &criapi.RemoveImageRequest{Image: &criapi.ImageSpec{Image: image}})
	if err = criError("remove image "+image, err); isNotFound(err) {
		return nil
	}
	return err
}

func imageFromCRI(img *criapi.Image) Image {
	out := Image{ID: img.GetId(), RepoTags: img.GetRepoTags(), RepoDigests: img.GetRepoDigests(), Size: img.GetSize(), Username: img.GetUsername()}
	if u := img.GetUid(); u != nil {
		uid := u.GetValue()
		out.UID = &uid
	}
	return out
}
