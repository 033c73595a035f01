package nodeserver

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// How long review answers are kept, as the kubelet's defaults.
const (
	tokenTTL   = 2 * time.Minute
	allowedTTL = 5 * time.Minute
	deniedTTL  = 30 * time.Second
)

var (
	errUnauthenticated = errors.New("unauthenticated")
	errForbidden       = errors.New("forbidden")
)

// user is an authenticated caller.
type user struct {
	name, uid string
	groups    []string
	extra     map[string]authorizationv1.ExtraValue
}

// cached is one review answer with its expiry.
type cached[T any] struct {
	v       T
	err     error
	expires time.Time
}

// authorizer authenticates and authorizes requests.
type authorizer struct {
	client   kubernetes.Interface // nil: client certificates only
	nodeName string
	now      func() time.Time

	mu     sync.Mutex
	tokens map[[32]byte]cached[user]
	access map[string]cached[bool]
}

func newAuthorizer(client kubernetes.Interface, nodeName string) *authorizer {
	return &authorizer{client: client, nodeName: nodeName, now: time.Now,
		tokens: map[[32]byte]cached[user]{}, access: map[string]cached[bool]{}}
}

// check returns nil when r may be served.
func (a *authorizer) check(r *http.Request) error {
	u, fromCert, err := a.authenticate(r)
	if err != nil {
		return err
	}
	if a.client == nil && fromCert {
		return nil
	}
	var last error
	for _, sub := range subresourcesOf(r.URL.Path) {
		if last = a.authorize(r.Context(), u, verbOf(r.Method), sub); last == nil {
			return nil
		}
	}
	return last
}

// subresourcesOf is the nodes subresources that allow a path, as the
// kubelet's authorization with KubeletFineGrainedAuthz: /stats/… is
// nodes/stats, /metrics/… nodes/metrics; /pods and /healthz their own
// subresource or, failing that, nodes/proxy; everything else nodes/proxy.
func subresourcesOf(path string) []string {
	under := func(prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }
	switch {
	case under("/stats"):
		return []string{"stats"}
	case under("/metrics"):
		return []string{"metrics"}
	case under("/pods"), under("/runningpods"):
		return []string{"pods", "proxy"}
	case under("/healthz"):
		return []string{"healthz", "proxy"}
	}
	return []string{"proxy"}
}

func (a *authorizer) authenticate(r *http.Request) (user, bool, error) {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		c := r.TLS.VerifiedChains[0][0]
		return user{name: c.Subject.CommonName, groups: c.Subject.Organization}, true, nil
	}
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return user{}, false, fmt.Errorf("%w: no client certificate from the trusted CA and no bearer token", errUnauthenticated)
	}
	if a.client == nil {
		return user{}, false, fmt.Errorf("%w: bearer tokens are not accepted without an API server to review them", errUnauthenticated)
	}
	u, err := a.reviewToken(r.Context(), tok)
	return u, false, err
}

func (a *authorizer) reviewToken(ctx context.Context, tok string) (user, error) {
	key := sha256.Sum256([]byte(tok))
	a.mu.Lock()
	c, ok := a.tokens[key]
	a.mu.Unlock()
	if ok && a.now().Before(c.expires) {
		return c.v, c.err
	}
	review, err := a.client.AuthenticationV1().TokenReviews().Create(ctx,
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tok}}, metav1.CreateOptions{})
	if err != nil {
		return user{}, fmt.Errorf("%w: reviewing the token: %w", errUnauthenticated, err) // not cached: the API server may be back soon
	}
	var u user
	var uerr error
	if !review.Status.Authenticated {
		uerr = fmt.Errorf("%w: the API server did not approve the token: %s", errUnauthenticated, orNone(review.Status.Error))
	} else {
		info := review.Status.User
		u = user{name: info.Username, uid: info.UID, groups: info.Groups, extra: map[string]authorizationv1.ExtraValue{}}
		for k, v := range info.Extra {
			u.extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	a.mu.Lock()
	a.tokens[key] = cached[user]{v: u, err: uerr, expires: a.now().Add(tokenTTL)}
	a.mu.Unlock()
	return u, uerr
}

func (a *authorizer) authorize(ctx context.Context, u user, verb, subresource string) error {
	key := u.name + "\x00" + strings.Join(u.groups, ",") + "\x00" + verb + "\x00" + subresource
	a.mu.Lock()
	c, ok := a.access[key]
	a.mu.Unlock()
	if !ok || !a.now().Before(c.expires) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: u.name, UID: u.uid, Groups: u.groups, Extra: u.extra,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "nodes", Subresource: subresource, Name: a.nodeName},
		}}
		res, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("%w: reviewing access of %s: %w", errForbidden, u.name, err)
		}
		ttl := deniedTTL
		if res.Status.Allowed {
			ttl = allowedTTL
		}
		c = cached[bool]{v: res.Status.Allowed, expires: a.now().Add(ttl)}
		a.mu.Lock()
		a.access[key] = c
		a.mu.Unlock()
	}
	if !c.v {
		return fmt.Errorf("%w: user %q may not %s nodes/%s of node %s", errForbidden, u.name, verb, subresource, a.nodeName)
	}
	return nil
}

// verbOf maps an HTTP method to the API verb, as the kubelet does.
func verbOf(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return "get"
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}
