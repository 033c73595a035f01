package ociarchive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// maxBlob bounds what Read holds in memory for one archive member.
const maxBlob = 256 << 20

// Archive is an OCI image layout archive as Read found it.
type Archive struct {
	Name           string            // AnnotationImageName, else AnnotationRefName
	Annotations    map[string]string // annotations of the manifest in index.json
	Platform       Platform
	Config         RuntimeConfig
	ManifestDigest string
	ConfigDigest   string
	DiffIDs        []string
	Entries        []Entry // the entries of every layer, in archive order
}

// Read parses an image layout archive holding exactly one image and checks
// every digest and size on the way: blob names against their content, the
// manifest, config and layer descriptors, and the config's diff_ids against
// the uncompressed layers.
func Read(r io.Reader) (*Archive, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if hdr.Size > maxBlob {
			return nil, fmt.Errorf("archive member %s: %d bytes is too large", hdr.Name, hdr.Size)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("read archive member %s: %w", hdr.Name, err)
		}
		files[strings.TrimPrefix(hdr.Name, "./")] = data
	}
	for name, data := range files {
		if !strings.HasPrefix(name, "blobs/sha256/") {
			continue
		}
		if want := "sha256:" + strings.TrimPrefix(name, "blobs/sha256/"); digest(data) != want {
			return nil, fmt.Errorf("blob %s: content digest is %s", name, digest(data))
		}
	}

	var lay layout
	if err := decode(files, "oci-layout", &lay); err != nil {
		return nil, err
	}
	if lay.ImageLayoutVersion != layoutVersion {
		return nil, fmt.Errorf("oci-layout: version %q, want %q", lay.ImageLayoutVersion, layoutVersion)
	}
	var idx index
	if err := decode(files, "index.json", &idx); err != nil {
		return nil, err
	}
	if len(idx.Manifests) != 1 {
		return nil, fmt.Errorf("index.json: %d manifests, want 1", len(idx.Manifests))
	}
	manDesc := idx.Manifests[0]
	if manDesc.MediaType != mediaTypeManifest {
		return nil, fmt.Errorf("index.json: manifest media type %q", manDesc.MediaType)
	}
	var man manifest
	if err := decodeBlob(files, manDesc, &man); err != nil {
		return nil, err
	}
	if man.Config.MediaType != mediaTypeConfig {
		return nil, fmt.Errorf("manifest: config media type %q", man.Config.MediaType)
	}
	var cfg imageConfig
	if err := decodeBlob(files, man.Config, &cfg); err != nil {
		return nil, err
	}
	if len(cfg.RootFS.DiffIDs) != len(man.Layers) {
		return nil, fmt.Errorf("config has %d diff_ids for %d layers", len(cfg.RootFS.DiffIDs), len(man.Layers))
	}

	a := &Archive{
		Name:           manDesc.Annotations[AnnotationImageName],
		Annotations:    manDesc.Annotations,
		Platform:       Platform{Architecture: cfg.Architecture, OS: cfg.OS},
		Config:         cfg.Config,
		ManifestDigest: manDesc.Digest,
		ConfigDigest:   man.Config.Digest,
		DiffIDs:        cfg.RootFS.DiffIDs,
	}
	if a.Name == "" {
		a.Name = manDesc.Annotations[AnnotationRefName]
	}
	if manDesc.Platform != nil && *manDesc.Platform != a.Platform {
		return nil, fmt.Errorf("index.json platform %+v differs from config %+v", *manDesc.Platform, a.Platform)
	}
	for i, l := range man.Layers {
		blob, err := blobOf(files, l)
		if err != nil {
			return nil, err
		}
		raw := blob
		switch l.MediaType {
		case mediaTypeLayerTar:
		case mediaTypeLayerGz:
			zr, err := gzip.NewReader(bytes.NewReader(blob))
			if err != nil {
				return nil, fmt.Errorf("layer %s: %w", l.Digest, err)
			}
			if raw, err = io.ReadAll(io.LimitReader(zr, maxBlob)); err != nil {
				return nil, fmt.Errorf("layer %s: %w", l.Digest, err)
			}
		default:
			return nil, fmt.Errorf("layer %s: unsupported media type %q", l.Digest, l.MediaType)
		}
		if got := digest(raw); got != cfg.RootFS.DiffIDs[i] {
			return nil, fmt.Errorf("layer %s: diff_id is %s, config says %s", l.Digest, got, cfg.RootFS.DiffIDs[i])
		}
		entries, err := layerEntries(raw)
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", l.Digest, err)
		}
		a.Entries = append(a.Entries, entries...)
	}
	return a, nil
}

func decode(files map[string][]byte, name string, v any) error {
	data, ok := files[name]
	if !ok {
		return fmt.Errorf("archive has no %s", name)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

func blobOf(files map[string][]byte, d descriptor) ([]byte, error) {
	if !strings.HasPrefix(d.Digest, "sha256:") {
		return nil, fmt.Errorf("descriptor digest %q is not sha256", d.Digest)
	}
	data, ok := files[blobPath(d.Digest)]
	if !ok {
		return nil, fmt.Errorf("archive has no blob %s", d.Digest)
	}
	if int64(len(data)) != d.Size {
		return nil, fmt.Errorf("blob %s: %d bytes, descriptor says %d", d.Digest, len(data), d.Size)
	}
	return data, nil
}

func decodeBlob(files map[string][]byte, d descriptor, v any) error {
	data, err := blobOf(files, d)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode blob %s: %w", d.Digest, err)
	}
	return nil
}

func layerEntries(raw []byte) ([]Entry, error) {
	return tarEntries(bytes.NewReader(raw))
}

// ReadRootfs reads a root filesystem tar, as `tar -C ROOT -cf - .` writes
// it, into entries for an Image: names lose their "./", the root itself is
// skipped, owners are kept, and a hard link becomes a copy of the file it
// links to (a layer holds no hard links). Device nodes, FIFOs and anything
// else that is not a file, directory, symlink or hard link are refused by
// name.
func ReadRootfs(r io.Reader) ([]Entry, error) {
	return tarEntries(r)
}

func tarEntries(r io.Reader) ([]Entry, error) {
	var entries []Entry
	files := map[string]int{} // cleaned path → index of its file entry
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return entries, nil
		}
		if err != nil {
			return nil, err
		}
		mode := fs.FileMode(hdr.Mode).Perm()
		if hdr.Mode&0o4000 != 0 {
			mode |= fs.ModeSetuid
		}
		if hdr.Mode&0o2000 != 0 {
			mode |= fs.ModeSetgid
		}
		if hdr.Mode&0o1000 != 0 {
			mode |= fs.ModeSticky
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if name == "." || name == "/" {
			continue
		}
		var e Entry
		switch hdr.Typeflag {
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			files[name] = len(entries)
			e = File(name, mode, data)
		case tar.TypeLink:
			target := path.Clean(strings.TrimPrefix(hdr.Linkname, "./"))
			i, ok := files[target]
			if !ok {
				return nil, fmt.Errorf("entry %s: hard link to %s, which is no file before it", hdr.Name, hdr.Linkname)
			}
			e = File(name, mode, entries[i].Data)
		case tar.TypeDir:
			e = Dir(name, mode)
		case tar.TypeSymlink:
			e = Symlink(name, hdr.Linkname)
			e.Mode = mode
		default:
			return nil, fmt.Errorf("entry %s: unsupported tar type %q", hdr.Name, hdr.Typeflag)
		}
		e.UID, e.GID = hdr.Uid, hdr.Gid
		entries = append(entries, e)
	}
}
