package ociarchive

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"reflect"
	"strings"
	"testing"
)

// rootfsTar writes headers (with their contents for files) as a tar.
func rootfsTar(t *testing.T, members ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, hdr := range members {
		data := strings.Repeat("p", int(hdr.Size))
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadRootfs(t *testing.T) {
	raw := rootfsTar(t,
		&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755},
		&tar.Header{Typeflag: tar.TypeDir, Name: "./usr/", Mode: 0o755},
		&tar.Header{Typeflag: tar.TypeReg, Name: "./usr/bin/perl", Mode: 0o755, Size: 4},
		&tar.Header{Typeflag: tar.TypeLink, Name: "./usr/bin/perl5.36.0", Linkname: "./usr/bin/perl", Mode: 0o755},
		&tar.Header{Typeflag: tar.TypeReg, Name: "./usr/bin/chage", Mode: 0o2755, Gid: 42, Size: 1},
		&tar.Header{Typeflag: tar.TypeSymlink, Name: "./bin", Linkname: "usr/bin", Mode: 0o777},
	)
	got, err := ReadRootfs(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	chage := File("usr/bin/chage", 0o755|fs.ModeSetgid, []byte("p"))
	chage.GID = 42
	want := []Entry{
		Dir("usr", 0o755),
		File("usr/bin/perl", 0o755, []byte("pppp")),
		File("usr/bin/perl5.36.0", 0o755, []byte("pppp")),
		chage,
		Symlink("bin", "usr/bin"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", got, want)
	}
	// What it reads, Write takes.
	if _, err := Write(&bytes.Buffer{}, Image{Name: "podhost.local/rootfs:1", Entries: got}); err != nil {
		t.Errorf("Write(ReadRootfs): %v", err)
	}
}

func TestReadRootfsRefuses(t *testing.T) {
	for name, hdr := range map[string]*tar.Header{
		"dev/null": {Typeflag: tar.TypeChar, Name: "./dev/null", Mode: 0o666, Devmajor: 1, Devminor: 3},
		"fifo":     {Typeflag: tar.TypeFifo, Name: "./fifo", Mode: 0o600},
		"orphan":   {Typeflag: tar.TypeLink, Name: "./orphan", Linkname: "./nowhere"},
	} {
		_, err := ReadRootfs(bytes.NewReader(rootfsTar(t, hdr)))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("ReadRootfs(%s) = %v; want an error naming it", name, err)
		}
	}
}
