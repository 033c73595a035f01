package scsivolume

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestWithSecretsDir(t *testing.T) {
	dir := t.TempDir()
	for name, v := range map[string]string{"node.session.auth.username": "alice", "..data": "x", "target": "secret"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("target", filepath.Join(dir, "node.session.auth.password")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		secrets map[string]string
		dir     string
		want    map[string]string
		wantErr bool
	}{
		{name: "no dir", secrets: map[string]string{"a": "b"}, want: map[string]string{"a": "b"}},
		{name: "files added, dot files and directories skipped, links followed", secrets: map[string]string{"a": "b"}, dir: dir,
			want: map[string]string{"a": "b", "node.session.auth.username": "alice", "node.session.auth.password": "secret", "target": "secret"}},
		{name: "missing dir", dir: filepath.Join(dir, "missing"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withSecretsDir(tt.secrets, tt.dir)
			if tt.wantErr {
				if !errors.Is(err, errSecretsDir) {
					t.Fatalf("got %v; want errSecretsDir", err)
				}
				if code := status.Code(toStatus(err)); code != codes.FailedPrecondition {
					t.Errorf("code: got %v; want FAILED_PRECONDITION", code)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
