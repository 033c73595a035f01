package sdk

import (
	"errors"
	"path/filepath"
	"strings"
)

// UnixSocketPath returns the socket path of a "unix://" endpoint such as
// "unix:///run/containerd/containerd.sock". The path must be absolute. Its
// errors read well as a FieldError message.
func UnixSocketPath(endpoint string) (string, error) {
	path, ok := strings.CutPrefix(endpoint, "unix://")
	switch {
	case endpoint == "":
		return "", errors.New("is required")
	case !ok:
		return "", errors.New(`must be a unix:// address, such as "unix:///run/plugin.sock"`)
	case !filepath.IsAbs(path):
		return "", errors.New("must name an absolute socket path after unix://")
	}
	return filepath.Clean(path), nil
}
