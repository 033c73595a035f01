// Package ociarchive writes and reads OCI image layout archives: a tar holding
// oci-layout, index.json and blobs/sha256/…, with one gzip layer built from a
// list of in-memory entries, the image config and the manifest. The archives
// are what `ctr images import` loads into containerd on machines that reach no
// registry. Output is deterministic: the same Image gives the same bytes and
// so the same digests. ReadRootfs turns a root filesystem tar (a Debian
// debootstrap, say) into such entries, owners kept and hard links copied.
//
// It imports only the standard library; hack/mkimage, images/localimages and
// test/conformance import it.
package ociarchive
