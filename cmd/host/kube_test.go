package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/host/config"
)

func TestKubeConfigRefusesUnverifiedTLS(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := func(name, cluster string) string {
		path := filepath.Join(dir, name)
		doc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {%s}}]
users: [{name: u, user: {token: secret}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, cluster)
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	verified := kubeconfig("verified", "server: https://127.0.0.1:6443, certificate-authority: "+writeCA(t, dir))
	insecure := kubeconfig("insecure", "server: https://127.0.0.1:6443, insecure-skip-tls-verify: true")
	plain := kubeconfig("plain", "server: http://127.0.0.1:8080")
	tests := []struct {
		name    string
		k       config.Kubernetes
		wantErr string
		wantIP  string
	}{
		{"verified", config.Kubernetes{Kubeconfig: verified}, "", "127.0.0.1"},
		{"node IP from the config", config.Kubernetes{Kubeconfig: verified, NodeIP: "10.0.0.5"}, "", "10.0.0.5"},
		{"insecure refused", config.Kubernetes{Kubeconfig: insecure}, "kubernetes.kubeconfig: " + insecure + " sets insecure-skip-tls-verify", ""},
		{"insecure allowed twice", config.Kubernetes{Kubeconfig: insecure, AllowInsecureSkipTLSVerify: true}, "", "127.0.0.1"},
		{"plain http refused", config.Kubernetes{Kubeconfig: plain}, "names a server without TLS", ""},
		{"missing kubeconfig", config.Kubernetes{Kubeconfig: filepath.Join(dir, "none")}, "kubernetes.kubeconfig: reading", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := tt.k
			got, ips, err := kubeConfig(t.Context(), &config.HostConfig{Kubernetes: &k})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Client == nil || len(ips) != 1 || ips[0] != tt.wantIP {
				t.Errorf("client %v, node IPs %v; want a client and [%s]", got.Client, ips, tt.wantIP)
			}
		})
	}
	if got, _, err := kubeConfig(t.Context(), &config.HostConfig{}); err != nil || got.Client != nil {
		t.Errorf("without a kubernetes section: %+v, %v; want local mode", got, err)
	}
}

// writeCA writes a self-signed CA certificate under dir and returns its
// path.
func writeCA(t *testing.T, dir string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
