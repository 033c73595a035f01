package registryauth

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// FuzzParse: any bytes in either key of a pull secret read without a
// panic, and whatever they yield can be looked up.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"auths": {"r.example.com:5000/team": {"auth": "dTpw"}}}`), "r.example.com:5000/team/app:v1")
	f.Add([]byte(`{"*.example.com": {"username": "u", "password": "p"}}`), "a.example.com/app")
	f.Add([]byte(`{"auths": {"https://[::1]:5000/v2/": {"auth": "dTpw=="}}}`), "[::1]:5000/app@sha256:00")
	f.Add([]byte(`{"auths": {"[a-": {}}}`), "busybox")
	f.Fuzz(func(t *testing.T, data []byte, image string) {
		for _, s := range []*v1.Secret{
			{Type: v1.SecretTypeDockerConfigJson, Data: map[string][]byte{v1.DockerConfigJsonKey: data}},
			{Type: v1.SecretTypeDockercfg, Data: map[string][]byte{v1.DockerConfigKey: data}},
		} {
			var k Keyring
			if err := k.Add("ns/fuzzed", s); err != nil {
				continue
			}
			for _, c := range k.Lookup(image) {
				if c.Secret != "ns/fuzzed" {
					t.Fatalf("credential from secret %q; want the fuzzed one", c.Secret)
				}
			}
		}
	})
}
