package config

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// StatFunc looks up a file by absolute path, following symbolic links, as
// os.Stat does. Tests pass a fake.
type StatFunc func(name string) (fs.FileInfo, error)

var osStat StatFunc = os.Stat

// checkBinary checks that the plugin binary at abs is a regular executable
// file that only its owner can write: the host runs it, so anyone who can
// change it can run code as the host.
func checkBinary(p *problems, path string, line int, abs string, stat StatFunc) {
	fi, err := stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.add(path, line, err, "%s does not exist", abs)
		return
	case err != nil:
		p.add(path, line, err, "cannot check %s: %v", abs, err)
		return
	case fi.IsDir():
		p.add(path, line, nil, "%s is a directory, not a plugin binary", abs)
		return
	case !fi.Mode().IsRegular():
		p.add(path, line, nil, "%s is not a regular file (%s)", abs, fi.Mode().Type())
		return
	}
	perm := fi.Mode().Perm()
	var faults []string
	if perm&0o111 == 0 {
		faults = append(faults, "is not executable")
	}
	switch perm & 0o022 {
	case 0o022:
		faults = append(faults, "is writable by group and others")
	case 0o020:
		faults = append(faults, "is writable by group")
	case 0o002:
		faults = append(faults, "is writable by others")
	}
	if len(faults) > 0 {
		p.add(path, line, nil, "%s %s (mode %04o); refusing to run it", abs, strings.Join(faults, " and "), uint32(perm))
	}
}
