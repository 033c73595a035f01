package localapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/podhost/podhost/host/localapi"
)

// fakeObjects records the calls; name "gone" is not found.
type fakeObjects struct{ calls []string }

func (f *fakeObjects) Apply(_ context.Context, kind, where string, body []byte) (localapi.ObjectInfo, string, error) {
	f.calls = append(f.calls, "apply "+kind+" "+where+" "+string(body))
	return localapi.ObjectInfo{Namespace: "default", Name: "cfg", Keys: []string{"k"}}, "created", nil
}

func (f *fakeObjects) Delete(_ context.Context, kind, namespace, name string) error {
	f.calls = append(f.calls, "delete "+kind+" "+namespace+"/"+name)
	if name == "gone" {
		return fmt.Errorf("%w: %s", localapi.ErrNotFound, name)
	}
	return nil
}

// TestObjectsEndpoints: POST and DELETE of ConfigMaps and Secrets reach
// the view with their kind, through the client; a missing one is 404;
// without a view they are 501.
func TestObjectsEndpoints(t *testing.T) {
	objs := &fakeObjects{}
	c := serve(t, localapi.Views{Plugins: func() []localapi.PluginInfo { return nil }, Ready: func() (bool, string) { return true, "" }, Objects: objs})
	res, err := c.ApplyObject(t.Context(), "Secret", []byte("body"))
	if err != nil || res.Op != "created" || res.Name != "cfg" {
		t.Errorf("ApplyObject = %+v, %v", res, err)
	}
	if err := c.DeleteObject(t.Context(), "ConfigMap", "default", "cfg"); err != nil {
		t.Errorf("DeleteObject: %v", err)
	}
	if err := c.DeleteObject(t.Context(), "Secret", "default", "gone"); !errors.Is(err, localapi.ErrNotFound) {
		t.Errorf("DeleteObject of a missing one: %v; want not found", err)
	}
	want := []string{"apply Secret request POST /v1/secrets body", "delete ConfigMap default/cfg", "delete Secret default/gone"}
	if fmt.Sprint(objs.calls) != fmt.Sprint(want) {
		t.Errorf("calls %q; want %q", objs.calls, want)
	}
	views := localapi.Views{Plugins: func() []localapi.PluginInfo { return nil }, Ready: func() (bool, string) { return true, "" }}
	for _, r := range []struct{ method, path string }{{"GET", "/v1/secrets"}, {"POST", "/v1/configmaps"}, {"DELETE", "/v1/secrets/a/b"}} {
		rec := httptest.NewRecorder()
		localapi.Handler(views).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), r.method, r.path, nil))
		if rec.Code != http.StatusNotImplemented {
			t.Errorf("%s %s without a view = %d; want 501", r.method, r.path, rec.Code)
		}
	}
}
