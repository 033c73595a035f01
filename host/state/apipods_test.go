package state

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAPIPodsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: "uid-" + "name"}}
	}
	if err := s.SaveAPIPods(t.Context(), []*v1.Pod{mk("a"), mk("b")}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveAPIPods(t.Context(), []*v1.Pod{mk("b")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pods, err := s.LoadAPIPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 || pods[0].Name != "b" {
		t.Errorf("loaded %v; want only pod b (the second save replaces the first)", pods)
	}
}
