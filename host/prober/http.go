package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// maxRedirects bounds the redirects an httpGet probe follows.
const maxRedirects = 10

// httpProber runs httpGet probes and hooks: no proxy, no keep-alive, no
// certificate check (as the kubelet), redirects followed only on the
// same host.
type httpProber struct {
	client *http.Client
}

func newHTTPProber() *httpProber {
	tr := &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // probes do not check certificates
	}
	return &httpProber{client: &http.Client{Transport: tr, CheckRedirect: sameHostRedirects}}
}

// sameHostRedirects follows a redirect on the same host; one to another
// host ends the probe with the redirect itself, which counts as success.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	return nil
}

// request builds the GET of an httpGet action.
func httpRequest(ctx context.Context, g *v1.HTTPGetAction, host string, port int, userAgent string) (*http.Request, error) {
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if path == "" {
		path = "/"
	}
	u, err := url.Parse(scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/")
	if err != nil {
		return nil, err
	}
	ref, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("httpGet path %q: %w", path, err)
	}
	u = u.ResolveReference(ref)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	return req, nil
}

// probe runs an httpGet probe: a status in [200, 300) is success, a
// redirect it did not follow (to another host) a success with a warning,
// any other status or no answer before ctx ends a failure.
func (p *httpProber) probe(ctx context.Context, g *v1.HTTPGetAction, host string, port int, userAgent string) (lifecycle.ProbeResult, string, error) {
	req, err := httpRequest(ctx, g, host, port, userAgent)
	if err != nil {
		return lifecycle.ProbeUnknown, "", err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return lifecycle.ProbeFailure, fmt.Sprintf("Get %q: context deadline exceeded (Client.Timeout exceeded while awaiting headers)", req.URL), nil
		}
		return lifecycle.ProbeFailure, err.Error(), nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxOutput))
	switch {
	case resp.StatusCode >= http.StatusMultipleChoices && resp.StatusCode < http.StatusBadRequest:
		// A redirect not followed (to another host): a success with a
		// warning, as the kubelet's.
		return lifecycle.ProbeWarning, "Probe terminated redirects, Response body: " + string(body), nil
	case resp.StatusCode >= http.StatusOK && resp.StatusCode < http.StatusBadRequest:
		return lifecycle.ProbeSuccess, string(body), nil
	}
	return lifecycle.ProbeFailure, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode), nil
}
