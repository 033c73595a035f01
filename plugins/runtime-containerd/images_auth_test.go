package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/sdk"
)

// pullRecorder is an image service whose pulls succeed only with the
// password it accepts ("" accepts an anonymous pull); it records the
// credentials of each pull.
type pullRecorder struct {
	criapi.ImageServiceClient
	accept string
	pulls  []*criapi.AuthConfig
}

func (p *pullRecorder) PullImage(_ context.Context, req *criapi.PullImageRequest, _ ...grpc.CallOption) (*criapi.PullImageResponse, error) {
	p.pulls = append(p.pulls, req.GetAuth())
	if req.GetAuth().GetPassword() == p.accept && (p.accept != "" || req.GetAuth() == nil) {
		return &criapi.PullImageResponse{ImageRef: "sha256:pulled"}, nil
	}
	return nil, status.Error(codes.Unknown, "failed to authorize: 401 Unauthorized")
}

func recorderRuntime(p *pullRecorder) *criRuntime {
	r := &criRuntime{}
	b := &backend{img: p}
	b.cfg.Timeouts.Image = sdk.Duration(time.Minute)
	r.current.Store(b)
	return r
}

// TestEnsureImageTriesAuthsInOrder: each credential is tried in turn until
// one pulls; none is anonymous; all failing is every message with the last
// one's class.
func TestEnsureImageTriesAuthsInOrder(t *testing.T) {
	ctx := t.Context()
	auths := []RegistryAuth{{Username: "u", Password: "wrong"}, {Username: "u", Password: "right"}, {Username: "u", Password: "later"}}

	p := &pullRecorder{accept: "right"}
	ref, pulled, err := recorderRuntime(p).EnsureImage(ctx, "r.example/app", PullAlways, auths)
	if err != nil || ref != "sha256:pulled" || !pulled {
		t.Fatalf("EnsureImage = %q %v %v; want pulled", ref, pulled, err)
	}
	if len(p.pulls) != 2 || p.pulls[0].GetPassword() != "wrong" || p.pulls[1].GetPassword() != "right" || p.pulls[1].GetUsername() != "u" {
		t.Errorf("pulls %v; want wrong then right", p.pulls)
	}

	p = &pullRecorder{}
	if _, _, err := recorderRuntime(p).EnsureImage(ctx, "r.example/app", PullAlways, nil); err != nil || len(p.pulls) != 1 || p.pulls[0] != nil {
		t.Errorf("no auths: err %v, pulls %v; want one anonymous pull", err, p.pulls)
	}

	p = &pullRecorder{accept: "none of them"}
	_, _, err = recorderRuntime(p).EnsureImage(ctx, "r.example/app", PullAlways, auths)
	if err == nil || len(p.pulls) != 3 || !errors.Is(err, errBackend) || strings.Count(err.Error(), "401 Unauthorized") != 3 ||
		!strings.Contains(err.Error(), "credentials 3 of 3") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("all failing: err %v, %d pulls; want 3 pulls, every message, class errBackend, no password", err, len(p.pulls))
	}
}
