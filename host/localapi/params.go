package localapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// checkParams refuses query parameters other than the allowed ones, so a
// misspelt option is an error rather than silently ignored.
func checkParams(r *http.Request, allowed ...string) error {
	for name := range r.URL.Query() {
		ok := false
		for _, a := range allowed {
			ok = ok || name == a
		}
		if !ok {
			what := "none"
			if len(allowed) > 0 {
				what = strings.Join(allowed, ", ")
			}
			return fmt.Errorf("%w: unknown query parameter %q (allowed: %s)", errBadRequest, name, what)
		}
	}
	return nil
}

// boolParam parses an optional boolean parameter.
func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badParam(name, v, "is not a boolean")
	}
	return b, nil
}

// intParam parses an optional non-negative integer parameter.
func intParam(r *http.Request, name string) (*int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return nil, badParam(name, v, "is not a non-negative integer")
	}
	return &n, nil
}

// logParams are the query parameters of GET /v1/pods/{ns}/{name}/logs.
var logParams = []string{"container", "follow", "tailLines", "previous", "timestamps", "sinceSeconds", "sinceTime"}

// logOptions parses the logs query; sinceSeconds becomes SinceTime by now.
func logOptions(r *http.Request, now time.Time) (LogOptions, error) {
	opts := LogOptions{Container: r.URL.Query().Get("container")}
	var err error
	for _, b := range []struct {
		name string
		v    *bool
	}{{"follow", &opts.Follow}, {"previous", &opts.Previous}, {"timestamps", &opts.Timestamps}} {
		if *b.v, err = boolParam(r, b.name); err != nil {
			return LogOptions{}, err
		}
	}
	if opts.TailLines, err = intParam(r, "tailLines"); err != nil {
		return LogOptions{}, err
	}
	since, err := intParam(r, "sinceSeconds")
	if err != nil {
		return LogOptions{}, err
	}
	if v := r.URL.Query().Get("sinceTime"); v != "" {
		if since != nil {
			return LogOptions{}, badParam("sinceTime", v, "goes with sinceSeconds; give one")
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return LogOptions{}, badParam("sinceTime", v, "is not an RFC 3339 time")
		}
		opts.SinceTime = &t
	}
	if since != nil {
		t := now.Add(-time.Duration(*since) * time.Second)
		opts.SinceTime = &t
	}
	return opts, nil
}
