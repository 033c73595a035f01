package scsivolume

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
)

// errSecretsDir is a secrets_dir that cannot be read.
var errSecretsDir = errors.New("secrets directory unreadable")

// withSecretsDir returns secrets with the regular files of dir added, one
// per key (file name = key, content = value), as a Kubernetes Secret is
// projected. Symlinks to regular files count (a projected volume's keys
// are links); dot files (its ..data bookkeeping) do not. dir "" adds none.
func withSecretsDir(secrets map[string]string, dir string) (map[string]string, error) {
	if dir == "" {
		return secrets, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("secrets_dir %s: %w: %w", dir, errSecretsDir, err)
	}
	out := maps.Clone(secrets)
	if out == nil {
		out = map[string]string{}
	}
	for _, e := range entries {
		if e.Name()[0] == '.' {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("secrets_dir %s: %w: %w", dir, errSecretsDir, err)
		}
		out[e.Name()] = string(b)
	}
	return out, nil
}
