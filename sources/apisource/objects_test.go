package apisource

import (
	"errors"
	"strings"
	"testing"
)

// TestApplyObject: a ConfigMap and a Secret are created, updated (UID
// kept), left unchanged, published in the snapshot, reloaded from the
// Persister and deleted; a bad key or the wrong kind is refused naming
// the field, never showing a Secret's value.
func TestApplyObject(t *testing.T) {
	p := &MemoryPersister{}
	s := newTestSource(t, p)
	<-s.Updates()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {greeting: hello}\n"
	got, op, err := s.ApplyObject(t.Context(), KindConfigMap, "req", []byte(cm))
	if err != nil || op != Created || got.ConfigMap.UID != "uid-1" || got.Namespace != "default" {
		t.Fatalf("create: %+v %s %v", got, op, err)
	}
	if _, op, err := s.ApplyObject(t.Context(), KindConfigMap, "req", []byte(cm)); err != nil || op != Unchanged {
		t.Errorf("same again: %s %v; want unchanged", op, err)
	}
	got, op, err = s.ApplyObject(t.Context(), KindConfigMap, "req", []byte(strings.Replace(cm, "hello", "bonjour", 1)))
	if err != nil || op != Updated || got.ConfigMap.UID != "uid-1" || got.ConfigMap.Data["greeting"] != "bonjour" {
		t.Errorf("update: %+v %s %v", got, op, err)
	}
	sec := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: hunter2}\n"
	if _, op, err := s.ApplyObject(t.Context(), KindSecret, "req", []byte(sec)); err != nil || op != Created {
		t.Fatalf("secret: %s %v", op, err)
	}
	snap := <-s.Updates()
	if len(snap.ConfigMaps) != 1 || snap.ConfigMaps[0].ConfigMap.Data["greeting"] != "bonjour" || len(snap.Secrets) != 1 ||
		string(snap.Secrets[0].Secret.Data["password"]) != "hunter2" || snap.Secrets[0].Origin.Where != "api secret default/creds" {
		t.Errorf("snapshot: %+v", snap)
	}

	for _, tt := range []struct{ kind, body, want string }{
		{KindSecret, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {'a b': hunter2}\n", `req: Secret default/s: invalid pod: data[a b]: Invalid value: "a b"`},
		{KindSecret, cm, `kind: Unsupported value: "ConfigMap": supported values: "Secret"`},
		{KindConfigMap, podYAML("web", "x:1"), `kind: Unsupported value: "not ConfigMap"`},
	} {
		_, _, err := s.ApplyObject(t.Context(), tt.kind, "req", []byte(tt.body))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("apply %s: %v; want %q", tt.kind, err, tt.want)
		}
	}

	// A restarted source finds them in the Persister.
	again := newTestSource(t, p)
	snap = <-again.Updates()
	if len(snap.ConfigMaps) != 1 || len(snap.Secrets) != 1 {
		t.Errorf("reloaded: %d ConfigMaps, %d Secrets; want 1 and 1", len(snap.ConfigMaps), len(snap.Secrets))
	}
	if err := again.DeleteObject(t.Context(), KindSecret, "default", "creds"); err != nil {
		t.Fatal(err)
	}
	if err := again.DeleteObject(t.Context(), KindSecret, "default", "creds"); !errors.Is(err, ErrObjectNotFound) {
		t.Errorf("second delete: %v; want not found", err)
	}
	if snap := <-again.Updates(); len(snap.Secrets) != 0 {
		t.Errorf("after delete: %d Secrets", len(snap.Secrets))
	}
}
