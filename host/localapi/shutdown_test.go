package localapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/host/localapi"
)

func TestShutdownEndpoint(t *testing.T) {
	calls := 0
	views := localapi.Views{
		Plugins: func() []localapi.PluginInfo { return nil },
		Ready:   func() (bool, string) { return true, "" },
		Shutdown: func(context.Context) (localapi.ShutdownResult, error) {
			calls++
			return localapi.ShutdownResult{BootID: "b1", GracePeriodSeconds: 30, Started: time.Unix(1, 0), Finished: time.Unix(3, 0),
				Pods: []localapi.ShutdownPod{{Namespace: "default", Name: "web", UID: "u1", GracePeriodSeconds: 5, Phase: "Running"}}}, nil
		},
	}
	srv := httptest.NewServer(localapi.Handler(views))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/v1/node/shutdown")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || calls != 0 {
		t.Errorf("GET /v1/node/shutdown: %d, %d calls; want 405 and no shutdown", resp.StatusCode, calls)
	}

	c, err := localapi.NewTCPClient(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ShutdownNode(t.Context())
	if err != nil {
		t.Fatalf("ShutdownNode: %v", err)
	}
	if calls != 1 || res.BootID != "b1" || len(res.Pods) != 1 || res.Pods[0].Phase != "Running" || res.Pods[0].GracePeriodSeconds != 5 {
		t.Errorf("ShutdownNode = %+v after %d calls; want the view's answer after one", res, calls)
	}

	views.Shutdown = nil
	srv2 := httptest.NewServer(localapi.Handler(views))
	defer srv2.Close()
	c2, _ := localapi.NewTCPClient(srv2.URL, "")
	if _, err := c2.ShutdownNode(t.Context()); err == nil || !strings.Contains(err.Error(), "not served") {
		t.Errorf("ShutdownNode without the view: %v; want 501 not served", err)
	}
}
