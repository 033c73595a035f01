package registryauth

import (
	"encoding/base64"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func jsonSecret(name, doc string) *v1.Secret {
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Type: v1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{v1.DockerConfigJsonKey: []byte(doc)}}
}

func auth(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}

func names(creds []Credential) string {
	var out []string
	for _, c := range creds {
		out = append(out, c.Username+":"+c.Password)
	}
	return strings.Join(out, ",")
}

func TestRepository(t *testing.T) {
	for image, want := range map[string]string{
		"busybox":                              "docker.io/library/busybox",
		"busybox:1.36":                         "docker.io/library/busybox",
		"user/app@sha256:abc":                  "docker.io/user/app",
		"index.docker.io/user/app:v1":          "docker.io/user/app",
		"localhost/app":                        "localhost/app",
		"127.0.0.1:5000/private/app:v1":        "127.0.0.1:5000/private/app",
		"registry.example.com/a/b:v1@sha256:x": "registry.example.com/a/b",
		"Upper/app":                            "Upper/app",
	} {
		if got := Repository(image); got != want {
			t.Errorf("Repository(%q) = %q; want %q", image, got, want)
		}
	}
}

// TestLookup follows the kubelet's matching rules, one case each.
func TestLookup(t *testing.T) {
	var k Keyring
	err := k.Add("ns/a", jsonSecret("a", `{"auths": {
		"registry.example.com": {"username": "host", "password": "p1"},
		"https://registry.example.com/v2/team": {"auth": "`+auth("team", "p2")+`"},
		"*.mirror.example.com": {"username": "glob", "password": "p3"},
		"127.0.0.1:5000": {"username": "port", "password": "p4", "auth": "`+strings.TrimRight(auth("fromauth", "p:5"), "=")+`"},
		"index.docker.io": {"username": "hub", "password": "p6"},
		"http://[::1": {"username": "bad key", "password": "ignored"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Add("ns/b", &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}, Type: v1.SecretTypeDockercfg,
		Data: map[string][]byte{v1.DockerConfigKey: []byte(`{"registry.example.com": {"username": "second", "password": "p7"}}`)}}); err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string]string{
		"registry.example.com/app:v1":       "host:p1,second:p7",
		"registry.example.com/team/app:v1":  "team:p2,host:p1,second:p7",
		"registry.example.com/teamster/app": "team:p2,host:p1,second:p7", // a path prefix, as the kubelet's
		"eu.mirror.example.com/app":         "glob:p3",
		"mirror.example.com/app":            "",
		"a.eu.mirror.example.com/app":       "",
		"127.0.0.1:5000/private/app":        "fromauth:p:5",
		"127.0.0.1:5001/private/app":        "",
		"127.0.0.1/private/app":             "",
		"busybox":                           "hub:p6",
		"docker.io/user/app":                "hub:p6",
		"other.example.org/app":             "",
	} {
		if got := names(k.Lookup(image)); got != want {
			t.Errorf("Lookup(%q) = %q; want %q", image, got, want)
		}
	}
	if c := k.Lookup("127.0.0.1:5000/app"); len(c) != 1 || c[0].Secret != "ns/a" {
		t.Errorf("Lookup names secret %+v; want ns/a", c)
	}
}

func TestAddIgnoresOtherSecrets(t *testing.T) {
	var k Keyring
	for _, s := range []*v1.Secret{
		{Type: v1.SecretTypeOpaque, Data: map[string][]byte{v1.DockerConfigJsonKey: []byte(`not json`)}},
		{Type: v1.SecretTypeDockerConfigJson, Data: map[string][]byte{v1.DockerConfigKey: []byte(`not json`)}},
		{Type: v1.SecretTypeDockercfg, Data: map[string][]byte{v1.DockerConfigKey: nil}},
	} {
		if err := k.Add("ns/other", s); err != nil {
			t.Errorf("Add(%s): %v; want nothing added", s.Type, err)
		}
	}
	if len(k.keys) != 0 {
		t.Errorf("keys %v; want none", k.keys)
	}
}

// TestAddErrors: an unreadable docker config names the Secret and its key
// and never shows the credential.
func TestAddErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"syntax":     `{"auths": {"r.example.com": {"password": "hunter2"`,
		"auths type": `{"auths": ["hunter2"]}`,
		"entry type": `{"auths": {"r.example.com": {"password": 7}}}`,
		"auth b64":   `{"auths": {"r.example.com": {"auth": "hunter2!!"}}}`,
		"auth colon": `{"auths": {"r.example.com": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("hunter2")) + `"}}}`,
		"top type":   `"hunter2"`,
	} {
		t.Run(name, func(t *testing.T) {
			var k Keyring
			err := k.Add("ns/bad", jsonSecret("bad", doc))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, "ns/bad") || !strings.Contains(msg, ".dockerconfigjson") || strings.Contains(msg, "hunter2") {
				t.Errorf("error %q: want one naming ns/bad and .dockerconfigjson, without the credential", msg)
			}
		})
	}
}
