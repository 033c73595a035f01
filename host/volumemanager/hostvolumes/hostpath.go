package hostvolumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/volumemanager"
)

// checkHostPath checks src.Path against src.Type as the kubelet does,
// creating it for DirectoryOrCreate (mode 0755, with its parents) and
// FileOrCreate (mode 0644, in an existing directory). A mismatch is a
// FieldError on hostPath.type.
func checkHostPath(src *v1.HostPathVolumeSource) error {
	typ := v1.HostPathUnset
	if src.Type != nil {
		typ = *src.Type
	}
	path := src.Path
	fi, err := os.Stat(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("hostPath.path %s: %w", path, err)
	}
	bad := func(detail string) error {
		return &volumemanager.FieldError{Field: "hostPath.type", Detail: fmt.Sprintf("%s: %s %s", typ, path, detail)}
	}
	want := func(ok bool, what string) error {
		switch {
		case !exists:
			return bad("does not exist")
		case !ok:
			return bad("is not a " + what)
		}
		return nil
	}
	switch typ {
	case v1.HostPathUnset:
		return nil
	case v1.HostPathDirectoryOrCreate:
		if !exists {
			if err := os.MkdirAll(path, 0o755); err != nil {
				return fmt.Errorf("creating hostPath %s: %w", path, err)
			}
			return nil
		}
		return want(fi.IsDir(), "directory")
	case v1.HostPathDirectory:
		return want(exists && fi.IsDir(), "directory")
	case v1.HostPathFileOrCreate:
		if !exists {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
			if err != nil {
				return fmt.Errorf("creating hostPath %s: %w", path, err)
			}
			return f.Close()
		}
		return want(fi.Mode().IsRegular(), "file")
	case v1.HostPathFile:
		return want(exists && fi.Mode().IsRegular(), "file")
	case v1.HostPathSocket:
		return want(exists && fi.Mode()&fs.ModeSocket != 0, "socket")
	case v1.HostPathCharDev:
		return want(exists && fi.Mode()&fs.ModeCharDevice != 0, "character device")
	case v1.HostPathBlockDev:
		return want(exists && fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0, "block device")
	}
	return &volumemanager.FieldError{Field: "hostPath.type", Detail: fmt.Sprintf("unsupported %q (want \"\", DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice or BlockDevice)", typ)}
}
