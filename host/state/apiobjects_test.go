package state

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAPIObjectsSurviveReopen: ConfigMaps and Secrets written through
// the local API are found again after the file is reopened, a removed
// one is not, and a record under the wrong key is refused.
func TestAPIObjectsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "default", Name: name} }
	for _, o := range []APIObject{
		{ConfigMap: &v1.ConfigMap{ObjectMeta: meta("cfg"), Data: map[string]string{"k": "v"}}},
		{Secret: &v1.Secret{ObjectMeta: meta("cfg"), Data: map[string][]byte{"p": []byte("x")}}},
		{ConfigMap: &v1.ConfigMap{ObjectMeta: meta("gone")}},
	} {
		var kind string
		var m metav1.ObjectMeta
		if o.Secret != nil {
			kind, m = "Secret", o.Secret.ObjectMeta
		} else {
			kind, m = "ConfigMap", o.ConfigMap.ObjectMeta
		}
		if err := s.WriteAPIObject(t.Context(), kind, m.Namespace, m.Name, &o); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteAPIObject(t.Context(), "ConfigMap", "default", "gone", nil); err != nil {
		t.Fatal(err)
	}
	wrong := APIObject{Secret: &v1.Secret{ObjectMeta: meta("x")}}
	if err := s.WriteAPIObject(t.Context(), "ConfigMap", "default", "x", &wrong); err == nil {
		t.Error("a Secret written as a ConfigMap was taken")
	}
	s.Close()
	s, err = Open(path, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	objs, err := s.LoadAPIObjects(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].ConfigMap == nil || objs[0].ConfigMap.Data["k"] != "v" || objs[1].Secret == nil || string(objs[1].Secret.Data["p"]) != "x" {
		t.Errorf("loaded %+v; want ConfigMap default/cfg and Secret default/cfg", objs)
	}
}
