package localimages

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/podhost/podhost/images/ociarchive"
)

func TestWriteArchives(t *testing.T) {
	dir := t.TempDir()
	archives, err := WriteArchives(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(archives) != 2 {
		t.Fatalf("%d archives, want 2", len(archives))
	}
	want := map[string]string{PauseName: "pause", BusyboxName: "bin/busybox"}
	for _, a := range archives {
		f, err := os.Open(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ociarchive.Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("read %s: %v", a.Path, err)
		}
		if got.Name != a.Name || got.ManifestDigest != a.Written.ManifestDigest {
			t.Errorf("%s: read back as %s %s", a.Name, got.Name, got.ManifestDigest)
		}
		found := false
		for _, e := range got.Entries {
			if e.Path == want[a.Name] && e.Type == ociarchive.TypeFile && len(e.Data) > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s has no %s", a.Name, want[a.Name])
		}
	}
	if err := CheckStatic(filepath.Join(dir, "pause")); err != nil {
		t.Error(err)
	}
}
