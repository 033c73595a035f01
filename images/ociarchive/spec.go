package ociarchive

// The subset of the OCI image and layout specifications that this package
// writes and reads.

const (
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayerGz  = "application/vnd.oci.image.layer.v1.tar+gzip"
	mediaTypeLayerTar = "application/vnd.oci.image.layer.v1.tar"

	// AnnotationRefName is the OCI annotation naming a manifest in index.json.
	AnnotationRefName = "org.opencontainers.image.ref.name"
	// AnnotationImageName is containerd's annotation with the full image
	// name; `ctr images import` prefers it over AnnotationRefName.
	AnnotationImageName = "io.containerd.image.name"

	layoutVersion = "1.0.0"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *Platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Platform is the architecture and operating system an image runs on.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type layout struct {
	ImageLayoutVersion string `json:"imageLayoutVersion"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type imageConfig struct {
	Architecture string        `json:"architecture"`
	OS           string        `json:"os"`
	Config       RuntimeConfig `json:"config"`
	RootFS       rootFS        `json:"rootfs"`
	History      []history     `json:"history,omitempty"`
}

// RuntimeConfig is the part of the image config that says how to run the
// image's process.
type RuntimeConfig struct {
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	Env        []string `json:"Env,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
	// User is the user (and group) the process runs as, "UID[:GID]" or a
	// name in the image's /etc/passwd; empty is root.
	User string `json:"User,omitempty"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

type history struct {
	CreatedBy string `json:"created_by,omitempty"`
}
