package registryauth

import (
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Credential is one username and password to try for an image, and the
// Secret it came from (namespace/name), for messages.
type Credential struct {
	Entry
	Secret string
}

// Keyring holds the registry keys of a pod's pull secrets; the zero value
// is empty.
type Keyring struct {
	creds map[string][]Credential // by key: host[:port][/path]
	keys  []string                // sorted, longest-sorting first
}

// dockerHub is the key whose credentials serve a Docker Hub image that no
// other key matched.
const dockerHub = "index.docker.io"

// Add reads one pull secret, called name (namespace/name) in messages,
// into the keyring. A Secret that is not a docker config (another type, or
// without its key) adds nothing; one whose docker config cannot be read is
// an error naming the Secret and key.
func (k *Keyring) Add(name string, s *v1.Secret) error {
	entries, err := secretEntries(name, s)
	if err != nil {
		return err
	}
	// Sorted, so that one Secret's credentials for one key come in a
	// fixed order.
	for _, raw := range slices.Sorted(maps.Keys(entries)) {
		key, ok := normalizeKey(raw)
		if !ok {
			continue // the kubelet passes over a key it cannot parse
		}
		if k.creds == nil {
			k.creds = map[string][]Credential{}
		}
		if _, seen := k.creds[key]; !seen {
			k.keys = append(k.keys, key)
		}
		k.creds[key] = append(k.creds[key], Credential{Entry: entries[raw], Secret: name})
	}
	slices.Sort(k.keys)
	slices.Reverse(k.keys)
	return nil
}

// normalizeKey turns a docker config's key into host[:port][/path]: a
// scheme and a leading /v1 or /v2 path element dropped, a bare "/" path
// dropped.
func normalizeKey(raw string) (string, bool) {
	s := raw
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", false
	}
	p := u.Path
	if strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/v2/") {
		p = p[3:]
	}
	if p == "" || p == "/" {
		return u.Host, true
	}
	return u.Host + p, true
}

// Lookup returns the credentials whose key matches image's repository,
// in the order to try them; none when no key matches (pull anonymously).
func (k *Keyring) Lookup(image string) []Credential {
	repo := Repository(image)
	var out []Credential
	for _, key := range k.keys {
		if matches(key, repo) {
			out = append(out, k.creds[key]...)
		}
	}
	if len(out) == 0 && isDockerHub(repo) {
		out = append(out, k.creds[dockerHub]...)
	}
	return out
}

// Repository is image without its tag or digest, a Docker Hub name
// written out in full (busybox → docker.io/library/busybox), as the
// kubelet looks credentials up.
func Repository(image string) string {
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name = name[:i]
	}
	domain, rest, found := strings.Cut(name, "/")
	if !found || (!strings.ContainsAny(domain, ".:") && domain != "localhost" && strings.ToLower(domain) == domain) {
		domain, rest = "docker.io", name
	}
	if domain == dockerHub {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	return domain + "/" + rest
}

// isDockerHub reports whether repo is on Docker Hub.
func isDockerHub(repo string) bool {
	domain, _, found := strings.Cut(repo, "/")
	if domain == "" {
		return false
	}
	return !found || domain == "docker.io" || domain == dockerHub || !strings.ContainsAny(domain, ".:")
}

// matches reports whether key (host[:port][/path], host labels may be
// globs) matches repo: as many labels, each matching, the same port, and
// the key's path a prefix of repo's.
func matches(key, repo string) bool {
	k, err := url.Parse("https://" + key)
	if err != nil {
		return false
	}
	r, err := url.Parse("https://" + repo)
	if err != nil {
		return false
	}
	kLabels, kPort := splitHost(k.Host)
	rLabels, rPort := splitHost(r.Host)
	if kPort != rPort || len(kLabels) != len(rLabels) || !strings.HasPrefix(r.Path, k.Path) {
		return false
	}
	for i, glob := range kLabels {
		if ok, err := filepath.Match(glob, rLabels[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func splitHost(hostport string) ([]string, string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	return strings.Split(host, "."), port
}
