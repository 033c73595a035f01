package localapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/podhost/podhost/host/localapi"
)

// logsRecorder is a Pods view that records the options of its Logs calls.
type logsRecorder struct {
	localapi.Pods
	got localapi.LogOptions
}

func (r *logsRecorder) Logs(_ context.Context, _, _ string, opts localapi.LogOptions, w io.Writer) error {
	r.got = opts
	_, err := io.WriteString(w, "ok\n")
	return err
}

func TestClientLogOptions(t *testing.T) {
	tail, since := int64(3), int64(60)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tc := range []struct {
		name  string
		opts  localapi.LogOptions
		check func(localapi.LogOptions) bool
	}{
		{"every flag", localapi.LogOptions{Container: "app", Follow: true, TailLines: &tail, Previous: true, Timestamps: true, SinceTime: &at},
			func(o localapi.LogOptions) bool {
				return o.Container == "app" && o.Follow && *o.TailLines == 3 && o.Previous && o.Timestamps && o.SinceTime.Equal(at)
			}},
		{"since seconds becomes a time", localapi.LogOptions{SinceSeconds: &since},
			func(o localapi.LogOptions) bool {
				d := time.Since(*o.SinceTime)
				return o.SinceSeconds == nil && d >= time.Minute && d < 2*time.Minute
			}},
		{"none", localapi.LogOptions{},
			func(o localapi.LogOptions) bool {
				return !o.Previous && !o.Timestamps && o.SinceTime == nil && o.TailLines == nil
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &logsRecorder{}
			c := serve(t, localapi.Views{Plugins: func() []localapi.PluginInfo { return nil }, Ready: func() (bool, string) { return true, "" }, Pods: rec})
			var out bytes.Buffer
			if err := c.Logs(t.Context(), "default", "web", tc.opts, &out); err != nil || out.String() != "ok\n" {
				t.Fatalf("Logs: %q, %v", out.String(), err)
			}
			if !tc.check(rec.got) {
				t.Errorf("the view got %+v from %+v", rec.got, tc.opts)
			}
		})
	}
	rec := &logsRecorder{}
	c := serve(t, localapi.Views{Plugins: func() []localapi.PluginInfo { return nil }, Ready: func() (bool, string) { return true, "" }, Pods: rec})
	err := c.Logs(t.Context(), "default", "web", localapi.LogOptions{SinceSeconds: &since, SinceTime: &at}, io.Discard)
	var apiErr *localapi.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Errorf("sinceSeconds with sinceTime: %v; want a 400", err)
	}
}
