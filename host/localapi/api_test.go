package localapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/localapi/localapitest"
)

const webPod = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: app, image: "busybox:1"}]
`

// fixture is a handler over fakes holding default/web (applied through the
// API, Running) and default/clash (rejected by a conflict).
func fixture(t *testing.T) (*localapitest.Pods, *localapitest.Events, localapi.Views) {
	t.Helper()
	pods := localapitest.NewPods()
	if _, err := pods.Apply(t.Context(), "request", []byte(webPod)); err != nil {
		t.Fatal(err)
	}
	pods.SetPhase("default", "web", v1.PodRunning, "")
	pods.Set(localapitest.Pod("default", "clash", "", `pods/clash.yaml: document 1: Pod default/clash: name claimed by another source: held by source "api"`))
	pods.SetLogs("default", "web", "app", "one\ntwo\nthree\n")
	events := &localapitest.Events{}
	events.Record("default", "web", "Normal", "Started", "started container app")
	events.Record("default", "other", "Warning", "Failed", "boom")
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "kubelet_restarted_pods_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	return pods, events, localapi.Views{
		Plugins: func() []localapi.PluginInfo {
			return []localapi.PluginInfo{{Name: "rt", Ready: true}, {Name: "csi", Ready: false}}
		},
		Ready:  func() (bool, string) { return false, "plugin csi not ready" },
		Pods:   pods,
		Events: events,
		Node: func(context.Context) localapi.NodeInfo {
			return localapi.NodeInfo{Hostname: "node1", HostVersion: "v9"}
		},
		Metrics: reg,
	}
}

func TestHandler(t *testing.T) {
	big := webPod + "# " + strings.Repeat("x", localapi.MaxBodySize) + "\n"
	tests := []struct {
		name, method, path, body string
		code                     int
		want                     []string // substrings of the answer
	}{
		{"list", "GET", "/v1/pods", "", 200, []string{`"name": "web"`, `"phase": "Running"`, `"readyContainers": 1`, `"phase": "Rejected"`, "name claimed by another source"}},
		{"get", "GET", "/v1/pods/default/web", "", 200, []string{`"uid": "uid-1"`, `"image": "busybox:1"`}},
		{"get missing", "GET", "/v1/pods/default/nope", "", 404, []string{`"error"`, "not found"}},
		{"apply unchanged", "POST", "/v1/pods", webPod, 200, []string{`"op": "unchanged"`}},
		{"apply created", "POST", "/v1/pods", strings.Replace(webPod, "name: web", "name: db", 1), 201, []string{`"op": "created"`, `"uid": "uid-2"`}},
		{"apply invalid names every field", "POST", "/v1/pods", strings.Replace(strings.Replace(webPod, "name: web", "name: Bad_Name", 1), `image: "busybox:1"`, `image: ""`, 1), 422,
			[]string{`"field": "metadata.name"`, `"field": "spec.containers[0].image"`}},
		{"apply unknown field", "POST", "/v1/pods", strings.Replace(webPod, "image:", "imagee:", 1), 422,
			[]string{`"field": "spec.containers[0].imagee"`, "unknown field"}},
		{"apply too large", "POST", "/v1/pods", big, 413, []string{"larger than 1048576 bytes"}},
		{"apply with a query parameter", "POST", "/v1/pods?dryRun=true", webPod, 400, []string{`\"dryRun\"`}},
		{"method not allowed", "PUT", "/v1/pods", "", 405, []string{"allowed: GET, POST"}},
		{"unknown endpoint", "GET", "/v2/pods", "", 404, []string{"no such endpoint"}},
		{"bad watch", "GET", "/v1/pods?watch=maybe", "", 400, []string{`\"watch\"`, "not a boolean"}},
		{"bad grace period", "DELETE", "/v1/pods/default/web?gracePeriod=soon", "", 400, []string{`\"gracePeriod\"`}},
		{"negative grace period", "DELETE", "/v1/pods/default/web?gracePeriod=-1", "", 400, []string{`\"gracePeriod\"`}},
		{"bad force", "DELETE", "/v1/pods/default/web?force=yes!", "", 400, []string{`\"force\"`}},
		{"misspelt delete option", "DELETE", "/v1/pods/default/web?grace=3", "", 400, []string{`\"grace\"`}},
		{"delete missing", "DELETE", "/v1/pods/default/nope", "", 404, []string{"not found"}},
		{"delete", "DELETE", "/v1/pods/default/web?gracePeriod=5", "", 200, []string{`"deletionGracePeriodSeconds": 5`, `"reason": "Terminating"`}},
		{"logs", "GET", "/v1/pods/default/web/logs?container=app", "", 200, []string{"one\ntwo\nthree\n"}},
		{"logs tail", "GET", "/v1/pods/default/web/logs?container=app&tailLines=1", "", 200, []string{"three\n"}},
		{"logs bad tail", "GET", "/v1/pods/default/web/logs?container=app&tailLines=x", "", 400, []string{`\"tailLines\"`}},
		{"logs unknown container", "GET", "/v1/pods/default/web/logs?container=nope", "", 404, []string{`container \"nope\"`}},
		{"events", "GET", "/v1/events", "", 200, []string{`"reason": "Started"`, `"reason": "Failed"`}},
		{"events for a pod", "GET", "/v1/events?for=default/other", "", 200, []string{`"reason": "Failed"`}},
		{"events bad for", "GET", "/v1/events?for=/web", "", 400, []string{`\"for\"`, "namespace/name"}},
		{"node", "GET", "/v1/node", "", 200, []string{`"hostname": "node1"`, `"hostVersion": "v9"`, `"total": 2`, `"ready": 1`, `"csi"`, `"pods": 2`, `"notReady": "plugin csi not ready"`}},
		{"metrics", "GET", "/metrics", "", 200, []string{"kubelet_restarted_pods_total 3"}},
		{"healthz", "GET", "/healthz", "", 200, []string{"ok"}},
		{"readyz", "GET", "/readyz", "", 503, []string{"plugin csi not ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, views := fixture(t)
			rec := httptest.NewRecorder()
			req := httptest.NewRequestWithContext(t.Context(), tt.method, tt.path, strings.NewReader(tt.body))
			localapi.Handler(views).ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != tt.code {
				t.Fatalf("%s %s = %d; want %d\n%s", tt.method, tt.path, rec.Code, tt.code, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("answer does not contain %q:\n%s", w, body)
				}
			}
			if tt.code >= 400 && tt.path != "/readyz" {
				var eb localapi.ErrorBody
				if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error == "" {
					t.Errorf("error answer is not an ErrorBody: %v\n%s", err, body)
				}
			}
		})
	}
}

func TestEventsNotExcluded(t *testing.T) {
	_, _, views := fixture(t)
	rec := httptest.NewRecorder()
	localapi.Handler(views).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", "/v1/events?for=default/other", nil))
	if strings.Contains(rec.Body.String(), "Started") {
		t.Errorf("events for default/other include default/web's:\n%s", rec.Body)
	}
}

func TestNilViewsAre501(t *testing.T) {
	views := localapi.Views{Plugins: func() []localapi.PluginInfo { return nil }, Ready: func() (bool, string) { return true, "" }}
	for _, path := range []string{"/v1/pods", "/v1/pods/a/b", "/v1/pods/a/b/logs", "/v1/events", "/metrics"} {
		rec := httptest.NewRecorder()
		localapi.Handler(views).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", path, nil))
		if rec.Code != http.StatusNotImplemented {
			t.Errorf("GET %s without a view = %d; want 501", path, rec.Code)
		}
	}
}

// serve runs the handler on a real HTTP server and returns a client of it.
func serve(t *testing.T, views localapi.Views) *localapi.Client {
	t.Helper()
	srv := httptest.NewServer(localapi.Handler(views))
	t.Cleanup(srv.Close)
	c, err := localapi.NewTCPClient(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClient(t *testing.T) {
	pods, _, views := fixture(t)
	c := serve(t, views)
	ctx := t.Context()

	list, err := c.Pods(ctx)
	if err != nil || len(list) != 2 || list[1].Name != "web" || list[1].Phase != "Running" {
		t.Fatalf("Pods = %+v, %v", list, err)
	}
	_, err = c.Apply(ctx, []byte(strings.Replace(webPod, `image: "busybox:1"`, `image: ""`, 1)))
	var apiErr *localapi.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 422 || len(apiErr.Fields) == 0 || apiErr.Fields[0].Field != "spec.containers[0].image" {
		t.Fatalf("Apply invalid: %#v", err)
	}
	if !strings.Contains(err.Error(), "spec.containers[0].image: Required value") {
		t.Errorf("client error does not name the field: %v", err)
	}
	if _, err := c.Pod(ctx, "default", "nope"); !errors.Is(err, localapi.ErrNotFound) {
		t.Errorf("Pod missing: err = %v; want ErrNotFound", err)
	}
	grace := int64(0)
	d, err := c.Delete(ctx, "default", "web", localapi.DeleteOptions{GracePeriod: &grace, Force: true})
	if err != nil || d.Pod.DeletionGracePeriodSeconds == nil || *d.Pod.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("Delete force = %+v, %v", d, err)
	}
	if _, err := pods.Get(ctx, "default", "web"); !errors.Is(err, localapi.ErrNotFound) {
		t.Errorf("force-deleted pod still listed: %v", err)
	}
	n, err := c.Node(ctx)
	if err != nil || n.Pods != 1 || n.Hostname != "node1" {
		t.Errorf("Node = %+v, %v", n, err)
	}
	evs, err := c.Events(ctx, localapi.EventFilter{Kind: "Pod", Namespace: "default", Name: "web"})
	if err != nil || len(evs) != 1 || evs[0].Reason != "Started" {
		t.Errorf("Events = %+v, %v", evs, err)
	}
	plugins, err := c.Plugins(ctx)
	if err != nil || len(plugins) != 2 {
		t.Errorf("Plugins = %+v, %v", plugins, err)
	}
}

func TestWatchPods(t *testing.T) {
	pods, _, views := fixture(t)
	c := serve(t, views)
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan localapi.PodEvent, 16)
	done := make(chan error, 1)
	go func() {
		done <- c.WatchPods(ctx, func(ev localapi.PodEvent) error { got <- ev; return nil })
	}()
	next := func() localapi.PodEvent {
		t.Helper()
		select {
		case ev := <-got:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no watch event within 10s")
		}
		return localapi.PodEvent{}
	}
	for _, want := range []string{"ADDED clash", "ADDED web"} {
		if ev := next(); string(ev.Type)+" "+ev.Summary.Name != want {
			t.Fatalf("event %s %s; want %s", ev.Type, ev.Summary.Name, want)
		}
	}
	waitFor(t, func() bool { return pods.Watchers() == 1 })
	pods.SetPhase("default", "clash", v1.PodPending, "ContainerCreating")
	if ev := next(); ev.Type != localapi.Modified || ev.Summary.Reason != "ContainerCreating" || ev.Pod == nil {
		t.Errorf("event %+v; want MODIFIED clash ContainerCreating with the pod", ev)
	}
	pods.Remove("default", "clash")
	if ev := next(); ev.Type != localapi.Deleted || ev.Summary.Name != "clash" {
		t.Errorf("event %+v; want DELETED clash", ev)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("WatchPods after cancel: %v", err)
	}
	waitFor(t, func() bool { return pods.Watchers() == 0 })
}

func TestWatchEventsAndFollowLogs(t *testing.T) {
	_, events, views := fixture(t)
	c := serve(t, views)

	t.Run("events", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		got := make(chan localapi.Event, 16)
		go c.WatchEvents(ctx, localapi.EventFilter{Kind: "Pod", Namespace: "default", Name: "web"}, func(e localapi.Event) error { got <- e; return nil })
		if e := <-got; e.Reason != "Started" {
			t.Fatalf("first event %+v; want the retained Started", e)
		}
		waitFor(t, func() bool { return events.Watchers() == 1 })
		events.Record("default", "other", "Normal", "Ignored", "not for web")
		events.Record("default", "web", "Normal", "Killing", "stopping")
		if e := <-got; e.Reason != "Killing" {
			t.Errorf("watched event %+v; want Killing (and not other pods' events)", e)
		}
	})

	t.Run("follow", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		pw := &signalWriter{ch: make(chan struct{})}
		done := make(chan error, 1)
		go func() {
			done <- c.Logs(ctx, "default", "web", localapi.LogOptions{Container: "app", Follow: true}, pw)
		}()
		<-pw.ch // the text arrived while the stream is still open
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Logs after cancel: %v", err)
		}
		if pw.String() != "one\ntwo\nthree\n" {
			t.Errorf("logs = %q", pw.String())
		}
	})
}

// signalWriter closes ch once it holds a full three-line log. It has no
// ReadFrom, so io.Copy goes through Write.
type signalWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Count(w.buf.String(), "\n") == 3 {
		close(w.ch)
	}
	return n, err
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		<-time.After(5 * time.Millisecond)
	}
}

var _ io.Writer = (*signalWriter)(nil)
