package state

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func apiPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}}
}

func put(name string) APIPodChange {
	return APIPodChange{Namespace: "default", Name: name, Pod: apiPod(name)}
}

func del(name string) APIPodChange { return APIPodChange{Namespace: "default", Name: name} }

// reopenedAPIPods closes s, opens its file again, as after a restart, and
// returns the names of the API pods found.
func reopenedAPIPods(t *testing.T, s *Store, path string) []string {
	t.Helper()
	s.Close()
	s, err := Open(path, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pods, err := s.LoadAPIPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

func TestAPIPodsSurviveReopen(t *testing.T) {
	tests := []struct {
		name    string
		changes []APIPodChange
		want    []string
	}{
		{"puts", []APIPodChange{put("a"), put("b")}, []string{"a", "b"}},
		{"delete", []APIPodChange{put("a"), put("b"), del("a")}, []string{"b"}},
		{"delete of nothing", []APIPodChange{del("a"), put("b")}, []string{"b"}},
		{"put after delete", []APIPodChange{put("a"), del("a"), put("a")}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			s, err := Open(path, hclog.NewNullLogger())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.changes {
				if err := s.WriteAPIPod(t.Context(), c); err != nil {
					t.Fatal(err)
				}
			}
			if got := reopenedAPIPods(t, s, path); !slices.Equal(got, tt.want) {
				t.Errorf("after restart: got pods %q; want %q", got, tt.want)
			}
		})
	}
}

// TestConcurrentAPIPodWritesAllDurable writes many pods at once: every
// write that returned is found after a restart.
func TestConcurrentAPIPodWritesAllDurable(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	var want []string
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		want = append(want, name)
		wg.Go(func() { errs[i] = s.WriteAPIPod(t.Context(), put(name)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if got := reopenedAPIPods(t, s, path); !slices.Equal(got, want) {
		t.Errorf("after restart: got %d pods %q; want %d", len(got), got, n)
	}
}
