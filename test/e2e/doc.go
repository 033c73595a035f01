// Package e2e holds podhost's end-to-end tests against real components on
// this machine: a private containerd started by test/crisetup, driven over
// CRI. They need root and hack/install-deps.sh; a missing dependency fails
// them, it never skips them. The package has no non-test code and nothing
// imports it.
package e2e
