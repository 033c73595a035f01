package podvalidate

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateConfigMapAndSecret(t *testing.T) {
	meta := metav1.ObjectMeta{Namespace: "default", Name: "cfg"}
	yes := true
	tests := []struct {
		name string
		cm   *v1.ConfigMap
		s    *v1.Secret
		want []string // one line per error
	}{
		{name: "good configmap", cm: &v1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"a.conf": "x", "B_2": "y"}, BinaryData: map[string][]byte{"bin": {0}}}},
		{name: "good secret", s: &v1.Secret{ObjectMeta: meta, Data: map[string][]byte{"password": []byte("hunter2")}}},
		{name: "bad keys name the field", cm: &v1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"a/b": "x", "..": "y"}},
			want: []string{`data[..]: Invalid value: "..": must not be '..'`, `data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`}},
		{name: "a key in data and binaryData", cm: &v1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "x"}, BinaryData: map[string][]byte{"k": {1}}},
			want: []string{`binaryData[k]: Invalid value: "k": duplicate of key present in data`}},
		{name: "bad name", cm: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "Bad_Name"}},
			want: []string{`metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{name: "immutable refused", cm: &v1.ConfigMap{ObjectMeta: meta, Immutable: &yes},
			want: []string{"immutable: Forbidden: " + immutableRefused}},
		{name: "too large", cm: &v1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": strings.Repeat("x", v1.MaxSecretSize+1)}},
			want: []string{"data: Too long: may not be more than 1048576 bytes"}},
		{name: "a bad secret key never shows the value", s: &v1.Secret{ObjectMeta: meta, Data: map[string][]byte{"a b": []byte("hunter2")}},
			want: []string{`data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`}},
		{name: "tls keys required", s: &v1.Secret{ObjectMeta: meta, Type: v1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("c")}},
			want: []string{"data[tls.key]: Required value: a Secret of type kubernetes.io/tls has it"}},
		{name: "service account token refused", s: &v1.Secret{ObjectMeta: meta, Type: v1.SecretTypeServiceAccountToken},
			want: []string{"type: Forbidden: a service-account token is the API server's to issue"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			if tt.cm != nil {
				for _, e := range ValidateConfigMap(tt.cm) {
					got = append(got, e.Error())
				}
			} else {
				for _, e := range ValidateSecret(tt.s) {
					got = append(got, e.Error())
					if strings.Contains(e.Error(), "hunter2") {
						t.Errorf("error shows the secret's value: %v", e)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
