package localapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to the local API of a running host, on its unix socket or
// over TCP with a bearer token.
type Client struct {
	// where names the server in errors.
	where string
	base  string
	token string
	http  *http.Client
	// dial reaches the server, for the streams' upgraded connections.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// socket is the unix socket's path; empty over TCP.
	socket string
}

// NewClient returns a client for the host serving on the unix socket path.
func NewClient(socket string) *Client {
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
	return &Client{
		where:  socket,
		base:   "http://host",
		http:   &http.Client{Transport: &http.Transport{DialContext: dial}},
		dial:   dial,
		socket: socket,
	}
}

// NewTCPClient returns a client for the host serving plain HTTP at server
// ("http://10.0.0.1:10250" or "10.0.0.1:10250"), sending token.
func NewTCPClient(server, token string) (*Client, error) {
	if !strings.Contains(server, "://") {
		server = "http://" + server
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("parsing api server address: %w", err)
	}
	if u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("api server address %q: want http://HOST:PORT", server)
	}
	var d net.Dialer
	return &Client{where: u.Host, base: "http://" + u.Host, token: token, http: &http.Client{}, dial: d.DialContext}, nil
}

// Plugins lists the running host's plugins.
func (c *Client) Plugins(ctx context.Context) ([]PluginInfo, error) {
	var out []PluginInfo
	return out, c.call(ctx, http.MethodGet, "/v1/plugins", nil, nil, &out)
}

// ConfigMaps lists the ConfigMaps of the host's sources: their keys.
func (c *Client) ConfigMaps(ctx context.Context) ([]ObjectInfo, error) {
	var out []ObjectInfo
	return out, c.call(ctx, http.MethodGet, "/v1/configmaps", nil, nil, &out)
}

// Secrets lists the Secrets of the host's sources: their keys, never
// their values.
func (c *Client) Secrets(ctx context.Context) ([]ObjectInfo, error) {
	var out []ObjectInfo
	return out, c.call(ctx, http.MethodGet, "/v1/secrets", nil, nil, &out)
}

// ApplyObject creates or replaces the one ConfigMap or Secret (kind) in
// body.
func (c *Client) ApplyObject(ctx context.Context, kind string, body []byte) (ObjectApplyResponse, error) {
	var out ObjectApplyResponse
	return out, c.call(ctx, http.MethodPost, objectsPath(kind), nil, body, &out)
}

// DeleteObject removes the ConfigMap or Secret (kind) namespace/name.
func (c *Client) DeleteObject(ctx context.Context, kind, namespace, name string) error {
	var out ObjectInfo
	return c.call(ctx, http.MethodDelete, objectsPath(kind)+"/"+url.PathEscape(namespace)+"/"+url.PathEscape(name), nil, nil, &out)
}

// objectsPath is the collection of kind "ConfigMap" or "Secret".
func objectsPath(kind string) string {
	if kind == "Secret" {
		return "/v1/secrets"
	}
	return "/v1/configmaps"
}

// Pods lists the host's pods.
func (c *Client) Pods(ctx context.Context) ([]PodSummary, error) {
	var out []PodSummary
	return out, c.call(ctx, http.MethodGet, "/v1/pods", nil, nil, &out)
}

// Pod returns one pod.
func (c *Client) Pod(ctx context.Context, namespace, name string) (PodDetail, error) {
	var out PodDetail
	return out, c.call(ctx, http.MethodGet, podPath(namespace, name), nil, nil, &out)
}

// Apply creates or updates the pod in body (JSON or YAML).
func (c *Client) Apply(ctx context.Context, body []byte) (ApplyResponse, error) {
	var out ApplyResponse
	return out, c.call(ctx, http.MethodPost, "/v1/pods", nil, body, &out)
}

// Delete deletes a pod.
func (c *Client) Delete(ctx context.Context, namespace, name string, opts DeleteOptions) (PodDetail, error) {
	q := url.Values{}
	if opts.GracePeriod != nil {
		q.Set("gracePeriod", strconv.FormatInt(*opts.GracePeriod, 10))
	}
	if opts.Force {
		q.Set("force", "true")
	}
	var out PodDetail
	return out, c.call(ctx, http.MethodDelete, podPath(namespace, name), q, nil, &out)
}

// WatchPods calls fn with the current pods, as ADDED, then with every
// change, until ctx is done (nil), the server ends the stream (io.EOF) or
// fn fails (its error).
func (c *Client) WatchPods(ctx context.Context, fn func(PodEvent) error) error {
	return c.stream(ctx, "/v1/pods", url.Values{"watch": {"true"}}, func(dec *json.Decoder) error {
		var ev PodEvent
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		return fn(ev)
	})
}

// Logs copies a container's log to w, as opts choose; with Follow, until
// ctx is done or the container exits.
func (c *Client) Logs(ctx context.Context, namespace, name string, opts LogOptions, w io.Writer) error {
	q := url.Values{}
	if opts.Container != "" {
		q.Set("container", opts.Container)
	}
	if opts.Follow {
		q.Set("follow", "true")
	}
	if opts.TailLines != nil {
		q.Set("tailLines", strconv.FormatInt(*opts.TailLines, 10))
	}
	if opts.Previous {
		q.Set("previous", "true")
	}
	if opts.Timestamps {
		q.Set("timestamps", "true")
	}
	if opts.SinceSeconds != nil {
		q.Set("sinceSeconds", strconv.FormatInt(*opts.SinceSeconds, 10))
	}
	if opts.SinceTime != nil {
		q.Set("sinceTime", opts.SinceTime.Format(time.RFC3339Nano))
	}
	resp, err := c.do(ctx, http.MethodGet, podPath(namespace, name)+"/logs", q, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading logs: %w", err)
	}
	return nil
}

// Events lists the host's events that pass the filter.
func (c *Client) Events(ctx context.Context, f EventFilter) ([]Event, error) {
	var out []Event
	return out, c.call(ctx, http.MethodGet, "/v1/events", eventQuery(f), nil, &out)
}

// WatchEvents calls fn with the retained events, then with every new one,
// until ctx is done (nil), the stream ends (io.EOF) or fn fails.
func (c *Client) WatchEvents(ctx context.Context, f EventFilter, fn func(Event) error) error {
	q := eventQuery(f)
	q.Set("watch", "true")
	return c.stream(ctx, "/v1/events", q, func(dec *json.Decoder) error {
		var ev Event
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		return fn(ev)
	})
}

// Node describes the host.
func (c *Client) Node(ctx context.Context) (NodeInfo, error) {
	var out NodeInfo
	return out, c.call(ctx, http.MethodGet, "/v1/node", nil, nil, &out)
}

func eventQuery(f EventFilter) url.Values {
	q := url.Values{}
	if f.Kind != "" {
		q.Set("kind", f.Kind)
	}
	switch {
	case f.Namespace != "":
		q.Set("for", f.Namespace+"/"+f.Name)
	case f.Name != "":
		q.Set("for", f.Name)
	}
	return q
}

func podPath(namespace, name string) string {
	return "/v1/pods/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
}

// call does one request and decodes the JSON answer into out.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body []byte, out any) error {
	resp, err := c.do(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding answer to %s %s: %w", method, path, err)
	}
	return nil
}

// stream reads JSON lines with next until ctx is done or next fails.
func (c *Client) stream(ctx context.Context, path string, q url.Values, next func(*json.Decoder) error) error {
	resp, err := c.do(ctx, http.MethodGet, path, q, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		if err := next(dec); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// do sends a request and returns a 2xx answer; any other becomes an
// *APIError.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body []byte) (*http.Response, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking the host on %s (is `podhost run` running?): %w", c.where, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	apiErr := &APIError{StatusCode: resp.StatusCode}
	var eb ErrorBody
	if json.Unmarshal(raw, &eb) == nil && eb.Error != "" {
		apiErr.Message, apiErr.Fields = eb.Error, eb.Fields
	} else {
		apiErr.Message = fmt.Sprintf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(raw)))
	}
	return nil, apiErr
}
