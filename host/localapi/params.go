package localapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
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
