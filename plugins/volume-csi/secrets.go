package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
)

// nodeSecrets returns the secrets of a call: those passed inline and those
// read from dir, one regular file per key, as a Kubernetes Secret is
// projected onto disk (entries whose names start with ".." are the
// projection's own and skipped; symlinks are followed). A missing or
// unreadable dir or file is errSecrets naming it; a key given both ways is
// errInvalid.
func nodeSecrets(inline map[string]string, dir string) (map[string]string, error) {
	if dir == "" {
		return inline, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: secrets_dir %s: %w", errSecrets, dir, err)
	}
	out := maps.Clone(inline)
	if out == nil {
		out = map[string]string{}
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") {
			continue
		}
		file := filepath.Join(dir, name)
		fi, err := os.Stat(file)
		if err != nil {
			return nil, fmt.Errorf("%w: secret file %s: %w", errSecrets, file, err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		value, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: secret file %s: %w", errSecrets, file, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%w: secret %q is given inline and in %s", errInvalid, name, file)
		}
		out[name] = string(value)
	}
	return out, nil
}
