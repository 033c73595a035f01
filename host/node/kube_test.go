package node

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/podvalidate"
)

func TestRejectionNamesTheVolume(t *testing.T) {
	base := func(volumes ...v1.Volume) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
			Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Volumes: volumes,
				Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
		}
	}
	projected := v1.Volume{Name: "kube-api-access-x1", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}}
	empty := v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}
	noName := base()
	noName.Spec.Containers[0].Name = ""
	tests := []struct {
		name        string
		pod         *v1.Pod
		err         error // nil: the merger's validation error of pod
		wantReason  string
		wantMessage []string
	}{
		{"projected volume", base(empty, projected), nil, ReasonUnsupportedVolume,
			[]string{"Pod was rejected: ", `volume "kube-api-access-x1": spec.volumes[1].projected.sources[0]: Forbidden: only downwardAPI, configMap and secret sources in a pod that is not the API server's`}},
		{"invalid container", noName, nil, ReasonInvalidPod, []string{"Pod was rejected: ", "spec.containers[0].name"}},
		{"name held by another source", base(), &sources.ConflictError{Kind: "Pod", Name: "default/web",
			Loser:  sources.Origin{Source: sources.SourceAPIServer, Where: "apiserver pod default/web"},
			Winner: sources.Origin{Source: sources.SourceFile, Where: "pods/web.yaml"}}, ReasonNameConflict,
			[]string{"Pod was rejected: ", `held by source "file"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err
			if err == nil {
				errs := podvalidate.ValidatePod(tt.pod, nil)
				if len(errs) == 0 {
					t.Fatal("the pod validates")
				}
				err = fmt.Errorf("apiserver pod default/web: pod default/web: %w", errs.ToAggregate())
			}
			reason, message := rejection(tt.pod, err)
			if reason != tt.wantReason {
				t.Errorf("reason %q, want %q", reason, tt.wantReason)
			}
			for _, w := range tt.wantMessage {
				if !strings.Contains(message, w) {
					t.Errorf("message %q lacks %q", message, w)
				}
			}
		})
	}
}
