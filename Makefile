# podhost build. Every binary is pure Go (CGO_ENABLED=0) and static.
GO          ?= go
VERSION     ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS     := -s -w -X main.version=$(VERSION)
GOBUILD     := CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'
PLUGINS     := runtime-containerd volume-csi volume-fc volume-iscsi
TOOLS       := bin/tools
TOOL_PKGS   := github.com/bufbuild/buf/cmd/buf \
               google.golang.org/protobuf/cmd/protoc-gen-go \
               google.golang.org/grpc/cmd/protoc-gen-go-grpc \
               honnef.co/go/tools/cmd/staticcheck \
               golang.org/x/tools/cmd/deadcode \
               golang.org/x/perf/cmd/benchstat
TEST_TIMEOUT ?= 45m

.PHONY: all build host plugins tools proto check-proto lint test unit e2e deps kube-binaries e2e-binaries conformance-sources cni-plugins images demo \
        conformance conformance-fast \
        containerd-up containerd-down bench-floor bench-podstart bench-probes bench-volstart clean

all: build

build: host plugins
	$(GOBUILD) -o bin/csi-loopdriver ./cmd/csi-loopdriver

host:
	$(GOBUILD) -o bin/podhost ./cmd/host

plugins:
	@mkdir -p bin/plugins
	@for p in $(PLUGINS); do \
		echo "$(GOBUILD) -o bin/plugins/$$p ./plugins/$$p"; \
		$(GOBUILD) -o bin/plugins/$$p ./plugins/$$p || exit 1; \
	done

# Tools are pinned in tools/go.mod and built into bin/tools.
tools: $(TOOLS)/.built
$(TOOLS)/.built: tools/go.mod tools/go.sum
	@mkdir -p $(TOOLS)
	cd tools && $(GO) build -o ../$(TOOLS)/ $(TOOL_PKGS)
	@touch $@

# Regenerates the Go code of proto/*/v1 (committed).
proto: tools
	PATH="$(CURDIR)/$(TOOLS):$$PATH" $(TOOLS)/buf lint
	PATH="$(CURDIR)/$(TOOLS):$$PATH" $(TOOLS)/buf generate

# Fails when the committed generated code is not what `make proto` writes.
check-proto: proto
	@git diff --exit-code -- proto || { echo "proto: generated code is stale; run make proto and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- proto)" || { git status --porcelain -- proto; echo "proto: untracked generated files; run make proto and commit" >&2; exit 1; }

# go.mod and go.sum must be what `go mod tidy` writes, here and in tools/.
lint: tools
	sh hack/check-tracked-binaries.sh
	$(GO) mod tidy -diff
	cd tools && $(GO) mod tidy -diff
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...
	sh hack/check-deadcode.sh $(TOOLS)/deadcode
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting" >&2; exit 1; }

# Installs what the tests and the demo need on a Debian machine (root).
deps:
	bash hack/install-deps.sh

# Builds kube-apiserver, kubectl, kube-controller-manager, kube-scheduler,
# etcd and metrics-server from the module proxy into $$HOME/.cache/podhost
# (kept across clones); the Kubernetes-mode tests run them.
kube-binaries:
	sh hack/kube-binaries.sh
	sh hack/metrics-server.sh

# Builds what the upstream node conformance suite runs with besides the control
# plane: e2e.test, ginkgo, agnhost and nonewprivs, from the module proxy into
# the same cache, upstream busybox for the suite's images from its source
# (hack/busybox.sh, with gcc) and the Debian root filesystem of the
# glibc-dns-testing image (hack/glibc-dns-testing.sh, with debootstrap):
# install-deps.sh --busybox-build installs the tools. Cold this is over an
# hour on 2 busy cores.
e2e-binaries: conformance-sources
	sh hack/e2e-binaries.sh

# The two image sources of the conformance suite built from source, minutes
# cold: make test builds them too, so that their tests (test/conformance)
# check them on every machine, CI's included.
conformance-sources:
	bash hack/install-deps.sh --busybox-build
	sh hack/busybox.sh
	sh hack/glibc-dns-testing.sh

# The upstream Kubernetes node conformance suite against one podhost node
# (root; hours for the whole suite, see CONFORMANCE.md). FOCUS and SKIP are
# ginkgo regexps (default \[NodeConformance\] and \[Serial\]|\[Disruptive\]|\[Flaky\];
# the not-applicable specs are always skipped), PROCS the ginkgo processes.
# Writes the run's figures into CONFORMANCE.md. Not part of `make test`.
FOCUS ?=
SKIP  ?=
PROCS ?= 4
# TIMEOUT bounds a conformance run (ginkgo's suite timeout): at its end the
# running specs stop and the report is still written.
TIMEOUT ?= 24h
conformance: deps kube-binaries e2e-binaries cni-plugins build
	$(GO) run ./hack/conformance -procs $(PROCS) -timeout $(TIMEOUT) $(if $(FOCUS),-focus '$(FOCUS)') $(if $(SKIP),-skip '$(SKIP)')

# The fixed fast subset of the suite (test/conformance/fast.go), the one
# meant for `make test` once it is measured under CI's limit.
conformance-fast: deps kube-binaries e2e-binaries cni-plugins build
	$(GO) run ./hack/conformance -fast -procs $(PROCS)

# Builds the reference CNI plugins (bridge, host-local, loopback, portmap)
# into $$HOME/.cache/podhost; the private containerd of the tests gives pods
# without hostNetwork a network with them.
cni-plugins:
	sh hack/cni-plugins.sh

# The whole test suite: unit tests, real-process plugin tests and the
# end-to-end tests against a private containerd that the tests start; then
# the fixed fast subset of the upstream node conformance suite
# (test/conformance.FastSpecs, every spec must pass) when its binaries are
# cached: `make e2e-binaries` builds them, over an hour cold, which is why a
# fresh machine (CI's) does not, and make test says so instead.
test: deps kube-binaries conformance-sources cni-plugins build
	$(GO) test -race -timeout $(TEST_TIMEOUT) ./...
	@if sh hack/e2e-binaries.sh --check; then \
		$(GO) run ./hack/conformance -fast -strict -procs 2 -out build/conformance/fast-run.md; \
	else \
		echo "make test: the conformance fast subset did not run (its binaries are not cached: make e2e-binaries)"; \
	fi

# Unit tests only: under -short the end-to-end tests and those that need
# root (a private containerd, an API server, mounts, loop devices) skip.
# make test runs them all, and there a missing dependency fails its test.
unit:
	$(GO) test -race -short ./...

e2e: deps kube-binaries cni-plugins build
	$(GO) test -timeout $(TEST_TIMEOUT) -v ./test/e2e/...

demo: deps build
	bash hack/demo.sh

# Local OCI image archives (podhost.local/pause:1, podhost.local/busybox:1).
images:
	$(GO) run ./hack/mkimage -local build/images

# A private containerd under CTRD_DIR, for poking around by hand.
CTRD_DIR ?= /tmp/podhost-ctrd
containerd-up: deps
	bash hack/containerd-up.sh $(CTRD_DIR)
containerd-down:
	bash hack/containerd-down.sh $(CTRD_DIR)

# Pod start/delete through the host against the CRI floor, on one private
# containerd (see BENCHMARKS.md). Root; about 2 minutes. Optional phases go
# in PODSTART_FLAGS: -usage (CPU idle and with the pods at rest, RSS; about
# 90 s more, -usage-window 30s -usage-settle 10s), -exits (container exit →
# host pod status), -calls (CRI calls per pod); e.g.
# make bench-podstart PODSTART_FLAGS='-usage -exits'.
PODSTART_FLAGS ?=
bench-podstart: deps
	$(GO) run ./bench/podstart -n 20 $(PODSTART_FLAGS)

# What the volume manager costs: a pod with a CSI volume against one without
# plus the loop driver's own stage + publish, and 200 mounted volumes at rest
# (see BENCHMARKS.md). Root; about 6 minutes.
bench-volstart: deps
	$(GO) run ./bench/volstart -n 20

# 100 containers with a 1 s exec probe each through the host, against the
# same ExecSync calls made directly, on one private containerd (see
# BENCHMARKS.md). Root; about 3 minutes.
bench-probes: deps
	$(GO) run ./bench/probes

# The floor: the same CRI calls issued directly to containerd, no agent.
bench-floor: deps
	bash hack/containerd-up.sh $(CTRD_DIR)
	$(GO) run ./bench/crifloor -endpoint unix://$(CTRD_DIR)/containerd.sock -n 20 -parallel 1
	$(GO) run ./bench/crifloor -endpoint unix://$(CTRD_DIR)/containerd.sock -n 20 -parallel 20
	bash hack/containerd-down.sh $(CTRD_DIR)

clean:
	rm -rf bin
