package ociarchive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"time"
)

// modTime is the modification time of every tar entry, so that archives are
// reproducible.
var modTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Image describes an image with a single layer.
type Image struct {
	// Name is the full image reference containerd stores the image under,
	// for example "podhost.local/pause:1". It must carry a tag.
	Name string
	// Platform defaults to linux and the architecture of this program.
	Platform Platform
	// Config is the default process of the image.
	Config RuntimeConfig
	// Entries are the files of the root filesystem. Missing parent
	// directories are added with mode 0755.
	Entries []Entry
	// Uncompressed writes the layer as a plain tar instead of gzip.
	Uncompressed bool
}

// Written says what Write produced.
type Written struct {
	Name           string // the image name, as in Image.Name
	ManifestDigest string // "sha256:…", the image's digest in containerd
	ConfigDigest   string // "sha256:…", the image ID CRI reports
	LayerDigest    string // digest of the layer blob as stored
	DiffID         string // digest of the uncompressed layer tar
}

// Write writes img as an OCI image layout tar to w.
func Write(w io.Writer, img Image) (Written, error) {
	if img.Name == "" {
		return Written{}, fmt.Errorf("image has no name")
	}
	platform := img.Platform
	if platform.OS == "" {
		platform.OS = "linux"
	}
	if platform.Architecture == "" {
		platform.Architecture = runtime.GOARCH
	}
	entries, err := normalize(img.Entries)
	if err != nil {
		return Written{}, fmt.Errorf("image %s: %w", img.Name, err)
	}

	layerTar, err := layerBytes(entries)
	if err != nil {
		return Written{}, fmt.Errorf("image %s: layer: %w", img.Name, err)
	}
	diffID := digest(layerTar)
	layer, layerType := layerTar, mediaTypeLayerTar
	if !img.Uncompressed {
		if layer, err = gzipBytes(layerTar); err != nil {
			return Written{}, fmt.Errorf("image %s: compress layer: %w", img.Name, err)
		}
		layerType = mediaTypeLayerGz
	}

	config, err := json.Marshal(imageConfig{
		Architecture: platform.Architecture,
		OS:           platform.OS,
		Config:       img.Config,
		RootFS:       rootFS{Type: "layers", DiffIDs: []string{diffID}},
		History:      []history{{CreatedBy: "podhost ociarchive"}},
	})
	if err != nil {
		return Written{}, fmt.Errorf("image %s: encode config: %w", img.Name, err)
	}
	man, err := json.Marshal(manifest{
		SchemaVersion: 2,
		MediaType:     mediaTypeManifest,
		Config:        describe(mediaTypeConfig, config),
		Layers:        []descriptor{describe(layerType, layer)},
	})
	if err != nil {
		return Written{}, fmt.Errorf("image %s: encode manifest: %w", img.Name, err)
	}
	manDesc := describe(mediaTypeManifest, man)
	manDesc.Platform = &platform
	manDesc.Annotations = map[string]string{
		AnnotationImageName: img.Name,
		AnnotationRefName:   img.Name,
	}
	idx, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaTypeIndex, Manifests: []descriptor{manDesc}})
	if err != nil {
		return Written{}, fmt.Errorf("image %s: encode index: %w", img.Name, err)
	}
	lay, err := json.Marshal(layout{ImageLayoutVersion: layoutVersion})
	if err != nil {
		return Written{}, fmt.Errorf("image %s: encode oci-layout: %w", img.Name, err)
	}

	tw := tar.NewWriter(w)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", lay},
		{"index.json", idx},
		{blobPath(digest(config)), config},
		{blobPath(digest(layer)), layer},
		{blobPath(manDesc.Digest), man},
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: modTime}); err != nil {
			return Written{}, fmt.Errorf("image %s: write archive: %w", img.Name, err)
		}
	}
	for _, f := range files {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: modTime}
		if err := tw.WriteHeader(hdr); err != nil {
			return Written{}, fmt.Errorf("image %s: write archive: %w", img.Name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return Written{}, fmt.Errorf("image %s: write archive: %w", img.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return Written{}, fmt.Errorf("image %s: write archive: %w", img.Name, err)
	}
	return Written{
		Name:           img.Name,
		ManifestDigest: manDesc.Digest,
		ConfigDigest:   digest(config),
		LayerDigest:    digest(layer),
		DiffID:         diffID,
	}, nil
}

// WriteFile writes img as an OCI image layout tar to the file name.
func WriteFile(name string, img Image) (Written, error) {
	f, err := os.Create(name)
	if err != nil {
		return Written{}, fmt.Errorf("create archive: %w", err)
	}
	w, err := Write(f, img)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close archive: %w", cerr)
	}
	return w, err
}

// layerBytes returns the uncompressed layer tar of normalized entries.
func layerBytes(entries []Entry) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.Path, Mode: int64(e.Mode.Perm()), Uid: e.UID, Gid: e.GID, ModTime: modTime, Format: tar.FormatPAX}
		hdr.Mode |= modeBits(e.Mode)
		switch e.Type {
		case TypeFile:
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(e.Data))
		case TypeDir:
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		case TypeSymlink:
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = e.Target
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("entry %s: %w", e.Path, err)
		}
		if e.Type == TypeFile {
			if _, err := tw.Write(e.Data); err != nil {
				return nil, fmt.Errorf("entry %s: %w", e.Path, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// modeBits returns the tar mode bits for setuid, setgid and sticky.
func modeBits(m os.FileMode) int64 {
	var bits int64
	if m&os.ModeSetuid != 0 {
		bits |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		bits |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		bits |= 0o1000
	}
	return bits
}

func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf) // zero header ModTime keeps the output reproducible
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func describe(mediaType string, data []byte) descriptor {
	return descriptor{MediaType: mediaType, Digest: digest(data), Size: int64(len(data))}
}

// blobPath returns the layout path of the blob with the given digest.
func blobPath(d string) string {
	return path.Join("blobs", "sha256", d[len("sha256:"):])
}
