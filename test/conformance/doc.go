// Package conformance holds what `make conformance` needs beyond starting
// the parts: the images the upstream Kubernetes e2e suite names, built
// without a registry on upstream busybox (images.go; hack/busybox.sh
// compiles it, CheckBusybox refuses one that would fail specs), and
// glibc-dns-testing on the Debian root filesystem hack/glibc-dns-testing.sh
// builds; the specs that cannot apply on this kind
// of machine and why (notapplicable.go); reading ginkgo's JUnit report
// (junit.go); and writing the run's figures into CONFORMANCE.md
// (report.go).
//
// hack/conformance is the command that builds on it: it starts etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler
// (test/kubecluster), a private containerd with a pod network
// (test/crisetup) and one podhost node in Kubernetes mode, and runs ginkgo
// over e2e.test. hack/mkimage writes the images as archives for humans.
//
// It is test infrastructure: production code must not import it. It is not
// part of `make test`: a full run takes hours.
package conformance
