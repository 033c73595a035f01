package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/podhost/podhost/host/config"
)

func TestKubernetesSection(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "node.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runtime-containerd"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(shutdownDoc, "/usr/libexec/podhost/plugins", dir, 1)
	for _, tc := range []struct {
		name    string
		extra   string
		want    *config.Kubernetes
		node    string
		wantErr string // a field the error must name, with its message
	}{
		{name: "left out", extra: ""},
		{name: "complete", extra: "nodeName: n1\nkubernetes:\n  kubeconfig: " + kubeconfig + "\n  nodeIP: 10.0.0.5\n  allowInsecureSkipTLSVerify: true\n",
			want: &config.Kubernetes{Kubeconfig: kubeconfig, NodeIP: "10.0.0.5", AllowInsecureSkipTLSVerify: true}, node: "n1"},
		{name: "verification on by default", extra: "kubernetes:\n  kubeconfig: " + kubeconfig + "\n",
			want: &config.Kubernetes{Kubeconfig: kubeconfig}},
		{name: "no kubeconfig", extra: "kubernetes: {}\n", wantErr: "kubernetes.kubeconfig: required field is missing"},
		{name: "empty section", extra: "kubernetes:\n", wantErr: "kubernetes.kubeconfig: required field is missing"},
		{name: "relative kubeconfig", extra: "kubernetes: {kubeconfig: node.kubeconfig}\n", wantErr: "kubernetes.kubeconfig: want an absolute path"},
		{name: "missing kubeconfig", extra: "kubernetes: {kubeconfig: /nonexistent/kubeconfig}\n", wantErr: "kubernetes.kubeconfig: /nonexistent/kubeconfig does not exist"},
		{name: "kubeconfig is a directory", extra: "kubernetes: {kubeconfig: " + dir + "}\n", wantErr: "kubernetes.kubeconfig: " + dir + " is not a regular file"},
		{name: "misspelt field", extra: "kubernetes: {kubeconfig: " + kubeconfig + ", nodeIp: 10.0.0.5}\n", wantErr: `kubernetes.nodeIp: unknown field (did you mean "nodeIP"?)`},
		{name: "bad node IP", extra: "kubernetes: {kubeconfig: " + kubeconfig + ", nodeIP: ten}\n", wantErr: `kubernetes.nodeIP: want an IP address, got "ten"`},
		{name: "allow is a boolean", extra: "kubernetes: {kubeconfig: " + kubeconfig + ", allowInsecureSkipTLSVerify: yes}\n", wantErr: "kubernetes.allowInsecureSkipTLSVerify: want a boolean"},
		{name: "bad node name", extra: "nodeName: Node_1\n", wantErr: `nodeName: invalid node name "Node_1"`},
		{name: "daemon endpoint", extra: "kubernetes:\n  kubeconfig: " + kubeconfig + "\n  server: {address: \"127.0.0.1:10250\", tlsCertFile: /etc/n.crt, tlsPrivateKeyFile: /etc/n.key, clientCAFile: /etc/ca.crt}\n  nodeLabels: {rack: r1}\n",
			want: &config.Kubernetes{Kubeconfig: kubeconfig, Server: &config.KubeServer{Address: "127.0.0.1:10250", TLSCertFile: "/etc/n.crt",
				TLSPrivateKeyFile: "/etc/n.key", ClientCAFile: "/etc/ca.crt"}, NodeLabels: map[string]string{"rack": "r1"}}},
		{name: "daemon endpoint without port", extra: "kubernetes:\n  kubeconfig: " + kubeconfig + "\n  server: {address: 127.0.0.1, tlsCertFile: /etc/n.crt, tlsPrivateKeyFile: /etc/n.key, clientCAFile: /etc/ca.crt}\n",
			wantErr: `kubernetes.server.address: want host:port, got "127.0.0.1"`},
		{name: "daemon endpoint without its CA", extra: "kubernetes:\n  kubeconfig: " + kubeconfig + "\n  server: {address: \":10250\", tlsCertFile: /etc/n.crt, tlsPrivateKeyFile: /etc/n.key}\n",
			wantErr: "kubernetes.server.clientCAFile: required field is missing"},
		{name: "bad label key", extra: "kubernetes:\n  kubeconfig: " + kubeconfig + "\n  nodeLabels: {\"bad key\": x}\n",
			wantErr: `kubernetes.nodeLabels.bad key: invalid label key "bad key"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(doc+tc.extra), "host.yaml")
			if err == nil {
				err = cfg.Validate(os.Stat)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v; want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case (cfg.Kubernetes == nil) != (tc.want == nil):
				t.Errorf("kubernetes = %+v, want %+v", cfg.Kubernetes, tc.want)
			case tc.want != nil && !reflect.DeepEqual(*cfg.Kubernetes, *tc.want):
				t.Errorf("kubernetes = %+v, want %+v", *cfg.Kubernetes, *tc.want)
			}
			if cfg.NodeName != tc.node {
				t.Errorf("nodeName = %q, want %q", cfg.NodeName, tc.node)
			}
		})
	}
}
