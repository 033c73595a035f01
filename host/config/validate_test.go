package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// mapStat serves absolute paths from an in-memory file system.
func mapStat(fsys fstest.MapFS) StatFunc {
	return func(name string) (fs.FileInfo, error) {
		return fsys.Stat(strings.TrimPrefix(name, "/"))
	}
}

func TestValidatePluginBinaries(t *testing.T) {
	const dir = "usr/libexec/podhost/plugins/"
	for _, tc := range []struct {
		name string
		mode fs.FileMode // of the runtime-containerd binary; 0 for none
		want []want
	}{
		{"owner-writable executable", 0o755, nil},
		{"read-only executable", 0o500, nil},
		{"missing", 0, []want{
			{"plugins[0].path", 9, "/usr/libexec/podhost/plugins/runtime-containerd does not exist"},
		}},
		{"directory", fs.ModeDir | 0o755, []want{
			{"plugins[0].path", 9, "/usr/libexec/podhost/plugins/runtime-containerd is a directory"},
		}},
		{"device", fs.ModeDevice | 0o755, []want{
			{"plugins[0].path", 9, "is not a regular file"},
		}},
		{"not executable", 0o644, []want{
			{"plugins[0].path", 9, "runtime-containerd is not executable (mode 0644); refusing to run it"},
		}},
		{"writable by others", 0o777, []want{
			{"plugins[0].path", 9, "/usr/libexec/podhost/plugins/runtime-containerd is writable by group and others (mode 0777); refusing to run it"},
		}},
		{"writable by group", 0o775, []want{
			{"plugins[0].path", 9, "is writable by group (mode 0775)"},
		}},
		{"writable by others only", 0o757, []want{
			{"plugins[0].path", 9, "is writable by others (mode 0757)"},
		}},
		{"both", 0o666, []want{
			{"plugins[0].path", 9, "is not executable and is writable by group and others (mode 0666)"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{dir + "volume-csi": {Mode: 0o755}}
			if tc.mode != 0 {
				fsys[dir+"runtime-containerd"] = &fstest.MapFile{Mode: tc.mode}
			}
			c, err := Parse([]byte(head+"  # the runtime\n"+runtime+"  - name: csi\n    kind: volume\n    path: volume-csi\n"), "host.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = c.Validate(mapStat(fsys))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			assertErrors(t, err, tc.want)
		})
	}
}

func TestValidateRepeatsRules(t *testing.T) {
	c, err := Parse([]byte(head+runtime), "host.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.PluginDir = "relative"
	c.Plugins = append(c.Plugins, c.Plugins[0])
	err = c.Validate(mapStat(fstest.MapFS{}))
	assertErrors(t, err, []want{
		{"pluginDir", 4, `want an absolute path, got "relative"`},
		{"plugins[1].name", 6, `duplicate plugin name "containerd"`},
		{"plugins[1].kind", 6, "second runtime plugin"},
	})
}

func TestValidateStatError(t *testing.T) {
	c, err := Parse([]byte(head+runtime), "host.yaml")
	if err != nil {
		t.Fatal(err)
	}
	denied := func(string) (fs.FileInfo, error) { return nil, fs.ErrPermission }
	err = c.Validate(denied)
	assertErrors(t, err, []want{{"plugins[0].path", 8, "cannot check /usr/libexec/podhost/plugins/runtime-containerd: permission denied"}})
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("errors.Is(%v, fs.ErrPermission) = false", err)
	}
}

// writeBinary writes an empty file at dir/name with mode perm, whatever the
// umask.
func writeBinary(t *testing.T, dir, name string, perm fs.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, nil, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadRealFiles(t *testing.T) {
	dir := t.TempDir()
	writeBinary(t, dir, "runtime-containerd", 0o755)
	csi := writeBinary(t, dir, "volume-csi", 0o777)
	if err := os.Symlink(filepath.Join(dir, "runtime-containerd"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(head, "/usr/libexec/podhost/plugins", dir, 1) +
		"  - name: containerd\n    kind: runtime\n    path: link\n" +
		"  - name: csi\n    kind: volume\n    path: " + csi + "\n" +
		"  - name: gone\n    kind: volume\n    path: volume-gone\n"
	path := filepath.Join(dir, "host.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}

	_, err := Load(path)
	assertErrors(t, err, []want{
		{"plugins[1].path", 11, csi + " is writable by group and others (mode 0777); refusing to run it"},
		{"plugins[2].path", 14, filepath.Join(dir, "volume-gone") + " does not exist"},
	})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(%v, fs.ErrNotExist) = false", err)
	}
	if !strings.HasPrefix(err.Error(), path+": line 11: plugins[1].path: ") {
		t.Errorf("Error() does not start with the file and line:\n%v", err)
	}

	// Fixing the files fixes the config.
	if err := os.Chmod(csi, 0o755); err != nil {
		t.Fatal(err)
	}
	writeBinary(t, dir, "volume-gone", 0o700)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(nil); err != nil {
		t.Errorf("Validate(nil) after Load: %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want fs.ErrNotExist", err)
	}
}
