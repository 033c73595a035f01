package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildTree is a fake build tree with the files install.sh copies.
func buildTree(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	files := map[string]string{
		"bin/podhost":                    "#!/bin/sh\necho host\n",
		"bin/plugins/runtime-containerd": "#!/bin/sh\necho rt\n",
		"bin/plugins/volume-csi":         "#!/bin/sh\necho csi\n",
		"examples/host.yaml":             "apiVersion: podhost.dev/v1alpha1\n",
		"docs/operations.md":             "# ops\n",
	}
	for name, body := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

func runInstall(t *testing.T, src, dest string) string {
	t.Helper()
	cmd := exec.Command("bash", "install.sh")
	cmd.Env = append(os.Environ(), "SRC="+src, "DESTDIR="+dest)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	return string(out)
}

func TestInstallScript(t *testing.T) {
	src, dest := buildTree(t), t.TempDir()
	runInstall(t, src, dest)
	want := map[string]os.FileMode{
		"usr/local/bin/podhost":                          0o755,
		"usr/libexec/podhost/plugins/runtime-containerd": 0o755,
		"usr/libexec/podhost/plugins/volume-csi":         0o755,
		"etc/podhost/host.yaml":                          0o644,
		"usr/lib/systemd/system/podhost.service":         0o644,
		"usr/share/doc/podhost/operations.md":            0o644,
	}
	for name, mode := range want {
		info, err := os.Stat(filepath.Join(dest, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if info.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", name, info.Mode().Perm(), mode)
		}
	}
	unit, _ := os.ReadFile(filepath.Join(dest, "usr/lib/systemd/system/podhost.service"))
	if !strings.Contains(string(unit), "KillMode=process") {
		t.Error("installed unit is not the repository's")
	}

	// A second install keeps the operator's config.
	cfg := filepath.Join(dest, "etc/podhost/host.yaml")
	if err := os.WriteFile(cfg, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runInstall(t, src, dest)
	if b, _ := os.ReadFile(cfg); string(b) != "edited\n" {
		t.Fatalf("config overwritten: %q", b)
	}
	if !strings.Contains(out, "keeping existing") {
		t.Errorf("second install did not say it kept the config:\n%s", out)
	}
}

func TestInstallScriptNeedsABuild(t *testing.T) {
	src := buildTree(t)
	if err := os.Remove(filepath.Join(src, "bin/podhost")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "install.sh")
	cmd.Env = append(os.Environ(), "SRC="+src, "DESTDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "make build") {
		t.Fatalf("install without a build: %v\n%s", err, out)
	}
}

func TestInstallScriptWarnsOfAnOldUnit(t *testing.T) {
	src, dest := buildTree(t), t.TempDir()
	if out := runInstall(t, src, dest); strings.Contains(out, "older install") {
		t.Errorf("fresh install warned of an older unit:\n%s", out)
	}
	old := filepath.Join(dest, "etc/systemd/system/podhost.service")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("[Service]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := runInstall(t, src, dest); !strings.Contains(out, "overrides the new unit") {
		t.Errorf("install over an older unit in /etc did not warn:\n%s", out)
	}
}
