package ociarchive

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"reflect"
	"strings"
	"testing"
)

func testImage() Image {
	return Image{
		Name:     "podhost.local/test:1",
		Platform: Platform{Architecture: "amd64", OS: "linux"},
		Config: RuntimeConfig{
			Cmd: []string{"sh"},
			Env: []string{"PATH=/bin"},
		},
		Entries: []Entry{
			File("/bin/busybox", 0o755, []byte("#!not really busybox\n")),
			Symlink("/bin/sh", "busybox"),
			Dir("/tmp", 0o777|fs.ModeSticky),
			{Path: "etc/deep/nested/file", Type: TypeFile, Mode: 0o640 | fs.ModeSetgid, Data: []byte("x"), GID: 42},
		},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	for _, uncompressed := range []bool{false, true} {
		img := testImage()
		img.Uncompressed = uncompressed
		var buf bytes.Buffer
		w, err := Write(&buf, img)
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		a, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("Read (uncompressed=%v): %v", uncompressed, err)
		}
		if a.Name != img.Name {
			t.Errorf("name %q, want %q", a.Name, img.Name)
		}
		if got := a.Annotations[AnnotationRefName]; got != img.Name {
			t.Errorf("ref.name annotation %q, want %q", got, img.Name)
		}
		if a.Platform != img.Platform {
			t.Errorf("platform %+v, want %+v", a.Platform, img.Platform)
		}
		if !reflect.DeepEqual(a.Config, img.Config) {
			t.Errorf("config %+v, want %+v", a.Config, img.Config)
		}
		if a.ManifestDigest != w.ManifestDigest || a.ConfigDigest != w.ConfigDigest {
			t.Errorf("digests read %s %s, written %s %s", a.ManifestDigest, a.ConfigDigest, w.ManifestDigest, w.ConfigDigest)
		}
		if len(a.DiffIDs) != 1 || a.DiffIDs[0] != w.DiffID {
			t.Errorf("diff_ids %v, want [%s]", a.DiffIDs, w.DiffID)
		}
		if (w.DiffID == w.LayerDigest) != uncompressed {
			t.Errorf("uncompressed=%v but diff_id %s, layer digest %s", uncompressed, w.DiffID, w.LayerDigest)
		}
		want := []Entry{
			Dir("bin", 0o755),
			File("bin/busybox", 0o755, []byte("#!not really busybox\n")),
			Symlink("bin/sh", "busybox"),
			Dir("etc", 0o755),
			Dir("etc/deep", 0o755),
			Dir("etc/deep/nested", 0o755),
			{Path: "etc/deep/nested/file", Type: TypeFile, Mode: 0o640 | fs.ModeSetgid, Data: []byte("x"), GID: 42},
			Dir("tmp", 0o777|fs.ModeSticky),
		}
		if !reflect.DeepEqual(a.Entries, want) {
			t.Errorf("entries:\n got %+v\nwant %+v", a.Entries, want)
		}
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	img := testImage()
	if _, err := Write(&a, img); err != nil {
		t.Fatal(err)
	}
	// The same entries in another order give the same bytes.
	img.Entries = append([]Entry(nil), img.Entries...)
	img.Entries[0], img.Entries[3] = img.Entries[3], img.Entries[0]
	if _, err := Write(&b, img); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of the same image differ")
	}
}

func TestLayoutMembers(t *testing.T) {
	var buf bytes.Buffer
	w, err := Write(&buf, testImage())
	if err != nil {
		t.Fatal(err)
	}
	members := map[string][]byte{}
	tr := tar.NewReader(&buf)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		members[hdr.Name] = data
	}
	for _, name := range []string{
		"oci-layout", "index.json", "blobs/", "blobs/sha256/",
		"blobs/sha256/" + strings.TrimPrefix(w.ManifestDigest, "sha256:"),
		"blobs/sha256/" + strings.TrimPrefix(w.ConfigDigest, "sha256:"),
		"blobs/sha256/" + strings.TrimPrefix(w.LayerDigest, "sha256:"),
	} {
		if _, ok := members[name]; !ok {
			t.Errorf("archive lacks %s", name)
		}
	}
	var idx map[string]any
	if err := json.Unmarshal(members["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	if idx["mediaType"] != mediaTypeIndex {
		t.Errorf("index mediaType %v", idx["mediaType"])
	}
}

func TestReadRejectsTampering(t *testing.T) {
	var buf bytes.Buffer
	w, err := Write(&buf, testImage())
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite the archive with one byte of the config blob changed.
	var out bytes.Buffer
	tr := tar.NewReader(bytes.NewReader(buf.Bytes()))
	tw := tar.NewWriter(&out)
	configPath := "blobs/sha256/" + strings.TrimPrefix(w.ConfigDigest, "sha256:")
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if hdr.Name == configPath {
			data = bytes.Replace(data, []byte(`"sh"`), []byte(`"ls"`), 1)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(&out); err == nil || !strings.Contains(err.Error(), "content digest") {
		t.Errorf("Read of a tampered archive: err = %v, want a digest error", err)
	}
}

func TestWriteRejectsBadEntries(t *testing.T) {
	for name, entries := range map[string][]Entry{
		"duplicate":           {File("a", 0o644, nil), File("/a", 0o644, nil)},
		"dot-dot":             {File("a/../../b", 0o644, nil)},
		"root":                {Dir("/", 0o755)},
		"empty":               {File("", 0o644, nil)},
		"parent is a file":    {File("a", 0o644, nil), File("a/b", 0o644, nil)},
		"symlink sans target": {{Path: "l", Type: TypeSymlink}},
	} {
		img := Image{Name: "podhost.local/bad:1", Entries: entries}
		if _, err := Write(io.Discard, img); err == nil {
			t.Errorf("%s: Write succeeded, want an error", name)
		}
	}
	if _, err := Write(io.Discard, Image{}); err == nil {
		t.Error("Write of an unnamed image succeeded")
	}
}
