// Package crisetup runs a private containerd for tests, benchmarks and demos:
// its own config, root, state and socket under one directory, so it never
// touches a system containerd. Start writes the config (from
// `containerd config default` with the changes this machine needs), starts
// containerd, waits until its CRI service answers, and imports podhost's
// local images (images/localimages) so that no registry is needed. Stop
// removes every sandbox through CRI, stops containerd and makes sure no shim
// it started is left running. With WithPodNetwork the instance also gets a
// pod network (cni.go): the reference CNI plugins of hack/cni-plugins.sh, a
// bridge of its own on a free /24 and a bridge + host-local conflist, so
// pods without hostNetwork get an IP the host reaches.
//
// Tests use StartForTest; hack/cri-instance and bench/podstart use Start,
// Open and Stop. It is
// test infrastructure: production code must not import it. Everything here
// needs root and the packages of hack/install-deps.sh.
package crisetup
