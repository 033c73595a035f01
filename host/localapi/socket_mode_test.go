package localapi

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fsnotify/fsnotify"
)

// TestSocketIsPrivateFromTheStart checks that the API socket is never
// reachable under its path with any mode but 0600: with umask 0, a socket
// bound at the path itself would appear there as 0777 and be chmod-ed
// afterwards, which the directory watch sees as a Chmod of the path. The
// socket must arrive under its name by a rename, already 0600.
func TestSocketIsPrivateFromTheStart(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	dir := filepath.Join(t.TempDir(), "custom")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "api.sock")
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Listen(sock, Views{Plugins: func() []PluginInfo { return nil }, Ready: func() (bool, string) { return true, "" }})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer s.Shutdown(context.WithoutCancel(t.Context()))

	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket %s has mode %s; want a socket with 0600", sock, fi.Mode())
	}
	if got := s.Addr().String(); got != sock {
		t.Errorf("Addr = %q; want %q", got, sock)
	}
	// Listen has returned: the events it caused come before the marker's.
	marker := filepath.Join(dir, "marker")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for ev := range w.Events {
		if ev.Name == marker {
			break
		}
		if ev.Name == sock && ev.Has(fsnotify.Chmod) {
			t.Errorf("the socket's mode was changed at its path (%s): it was reachable with another mode before", ev)
		}
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries; want only the socket (no leftover private directory)", len(entries))
	}
}
