package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	eventsapi "github.com/containerd/containerd/api/services/events/v1"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/sdk"
)

// maxMessageSize bounds CRI answers; a node with thousands of containers
// lists more than gRPC's default 4 MiB.
const maxMessageSize = 16 << 20

// backend is one connection to containerd and the config it was made for.
// It is replaced whole when the config changes.
type backend struct {
	cfg    config
	conn   *grpc.ClientConn
	rt     criapi.RuntimeServiceClient
	img    criapi.ImageServiceClient
	main   *grpc.ClientConn // containerd's main socket; conn when it is the CRI endpoint
	events eventsapi.EventsClient
}

// criRuntime is the logic of the plugin: the contract's calls made with
// CRI. It knows nothing of proto/runtime/v1.
type criRuntime struct {
	mu      sync.Mutex // serializes Configure
	current atomic.Pointer[backend]
	watch   *watcher
	ips     sandboxIPs
	log     hclog.Logger
	now     func() time.Time
	cgroups cgroupFS   // pod cgroups (podcgroup.go)
	qosMu   sync.Mutex // serializes the QoS cgroups' shares (syncQOSShares)
}

func newCRIRuntime(log hclog.Logger) *criRuntime {
	r := &criRuntime{log: log, now: time.Now, cgroups: cgroupFS{root: defaultCgroupFSRoot, busyWait: podCgroupBusyWait}}
	r.watch = newWatcher(r, log)
	return r
}

// Configure validates raw and swaps it in. The connection is made lazily by
// gRPC on the first call; a new endpoint gets a new connection and the old
// one is closed. A new endpoint, address or namespace makes the watcher
// start over (watcher.swap): its snapshot is of the old one.
func (r *criRuntime) Configure(_ context.Context, raw json.RawMessage) []sdk.FieldError {
	c, errs := parseConfig(raw)
	if len(errs) > 0 {
		return errs
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.current.Load()
	if old != nil && old.cfg.socketPath == c.socketPath && old.cfg.addressPath == c.addressPath {
		b := *old
		b.cfg = c
		if old.cfg.Namespace == c.Namespace {
			r.current.Store(&b)
		} else {
			r.watch.swap(func() { r.current.Store(&b) })
		}
		return nil
	}
	conn, err := dial(c.socketPath)
	if err != nil {
		return []sdk.FieldError{{Field: "endpoint", Message: err.Error()}}
	}
	main := conn
	if c.addressPath != c.socketPath {
		if main, err = dial(c.addressPath); err != nil {
			_ = conn.Close()
			return []sdk.FieldError{{Field: "address", Message: err.Error()}}
		}
	}
	b := &backend{
		cfg: c, conn: conn, rt: criapi.NewRuntimeServiceClient(conn), img: criapi.NewImageServiceClient(conn),
		main: main, events: eventsapi.NewEventsClient(main),
	}
	r.watch.swap(func() { r.current.Store(b) })
	if old != nil {
		// A stream on the old connection breaks; the watcher subscribes
		// again on the new one.
		old.close()
	}
	return nil
}

// close closes the backend's connections.
func (b *backend) close() error {
	err := b.conn.Close()
	if b.main != b.conn {
		err = errors.Join(err, b.main.Close())
	}
	return err
}

// dial makes a client for the unix socket at path without connecting.
// Reconnection backs off to at most two seconds, so that calls work again
// soon after containerd restarts.
func dial(path string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize), grpc.MaxCallSendMsgSize(maxMessageSize)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
			MinConnectTimeout: 5 * time.Second,
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("dial containerd at %s: %w", path, err)
	}
	return conn, nil
}

// Close closes the connection; the runtime is unusable afterwards.
func (r *criRuntime) Close() error {
	r.watch.stopAll()
	if b := r.current.Swap(nil); b != nil {
		return b.close()
	}
	return nil
}

// backend returns the current backend, or errUnavailable before the first
// Configure.
func (r *criRuntime) backend() (*backend, error) {
	b := r.current.Load()
	if b == nil {
		return nil, fmt.Errorf("%w: not configured", errUnavailable)
	}
	return b, nil
}

// runtimeCall bounds a sandbox or container call by the runtime timeout
// plus extra (a stop's grace period).
func (b *backend) runtimeCall(ctx context.Context, extra time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, time.Duration(b.cfg.Timeouts.Runtime)+extra)
}

// imageCall bounds an image call by the image timeout.
func (b *backend) imageCall(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, time.Duration(b.cfg.Timeouts.Image))
}

// Version names containerd and the CRI version it speaks.
func (r *criRuntime) Version(ctx context.Context) (VersionInfo, error) {
	b, err := r.backend()
	if err != nil {
		return VersionInfo{}, err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	v, err := b.rt.Version(ctx, &criapi.VersionRequest{})
	if err != nil {
		return VersionInfo{}, criError("version", err)
	}
	return VersionInfo{RuntimeName: v.GetRuntimeName(), RuntimeVersion: v.GetRuntimeVersion(), RuntimeAPIVersion: v.GetRuntimeApiVersion()}, nil
}

// Status reports containerd's conditions.
func (r *criRuntime) Status(ctx context.Context) ([]Condition, error) {
	b, err := r.backend()
	if err != nil {
		return nil, err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	resp, err := b.rt.Status(ctx, &criapi.StatusRequest{})
	if err != nil {
		return nil, criError("status", err)
	}
	var out []Condition
	for _, c := range resp.GetStatus().GetConditions() {
		out = append(out, Condition{Type: c.GetType(), Status: c.GetStatus(), Reason: c.GetReason(), Message: c.GetMessage()})
	}
	return out, nil
}

// Subscribe returns the changes containerd goes through from now on; see
// watcher.Subscribe.
func (r *criRuntime) Subscribe(ctx context.Context) (<-chan Event, func(), error) {
	return r.watch.Subscribe(ctx)
}

// list lists every sandbox and container, for the watcher.
func (r *criRuntime) list(ctx context.Context) (snapshot, error) {
	b, err := r.backend()
	if err != nil {
		return snapshot{}, err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	sandboxes, err := b.listSandboxes(ctx, nil)
	if err != nil {
		return snapshot{}, err
	}
	containers, err := b.listContainers(ctx, nil)
	if err != nil {
		return snapshot{}, err
	}
	return snapshotOf(sandboxes, containers), nil
}

// lookup tells what CRI knows of the object id, for the watcher.
func (r *criRuntime) lookup(ctx context.Context, id string) (object, error) {
	b, err := r.backend()
	if err != nil {
		return object{}, err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	containers, err := b.listContainers(ctx, &criapi.ContainerFilter{Id: id})
	if err != nil {
		return object{}, err
	}
	for _, c := range containers {
		if c.GetId() == id {
			return object{kind: objectContainer, container: snapshotOf(nil, []*criapi.Container{c}).containers[id]}, nil
		}
	}
	sandboxes, err := b.listSandboxes(ctx, &criapi.PodSandboxFilter{Id: id})
	if err != nil {
		return object{}, err
	}
	for _, sb := range sandboxes {
		if sb.GetId() == id {
			return object{kind: objectSandbox, sandbox: snapshotOf([]*criapi.PodSandbox{sb}, nil).sandboxes[id]}, nil
		}
	}
	return object{}, nil
}

// subscribe follows containerd's events in the configured namespace, for
// the watcher. The runtime timeout bounds the wait until it is live.
func (r *criRuntime) subscribe(ctx context.Context) (taskEvents, error) {
	b, err := r.backend()
	if err != nil {
		return nil, err
	}
	barrier, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	return subscribeContainerd(ctx, barrier, b.events, b.cfg.Namespace)
}

// teardown makes one idempotent CRI teardown call for the object id (named
// field in errors): an unknown object is already torn down, and a call that
// took effect is published to the event watcher as done. containerd's
// events of the object during the call wait for that note.
func (r *criRuntime) teardown(ctx context.Context, field, what, id string, done change, call func(context.Context, *backend) error) error {
	if id == "" {
		return fmt.Errorf("%w: %s is required", errInvalid, field)
	}
	b, err := r.backend()
	if err != nil {
		return err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	if err := r.awaitCRIExits(ctx, b, r.watch.pendingExits(id)); err != nil {
		return err
	}
	defer r.watch.begin(id)()
	if err := criError(what+" "+id, call(ctx, b)); isNotFound(err) {
		r.watch.notFound(id)
		return nil
	} else if err != nil {
		r.failed(err)
		return err
	}
	r.watch.note(done)
	return nil
}

// sandboxItem is the sandbox id as CRI lists it, for the watcher's
// snapshot: nil when nobody watches (the snapshot's listing, made later,
// has it) or the look-up fails (the snapshot goes stale). Its status holds
// all a list item does and the IP too, which the listings then need not
// ask for.
func (r *criRuntime) sandboxItem(ctx context.Context, b *backend, id string) *criapi.PodSandbox {
	if !r.watch.watching() {
		return nil
	}
	resp, err := b.rt.PodSandboxStatus(ctx, &criapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		r.log.Warn("look up a new sandbox for the snapshot; listings go to CRI until the next resync", "id", id, "err", err)
		return nil
	}
	st := resp.GetStatus()
	if st.GetState() == criapi.PodSandboxState_SANDBOX_READY {
		r.ips.remember(st.GetId(), st.GetNetwork().GetIp())
	}
	return &criapi.PodSandbox{
		Id: st.GetId(), Metadata: st.GetMetadata(), State: st.GetState(), CreatedAt: st.GetCreatedAt(),
		Labels: st.GetLabels(), Annotations: st.GetAnnotations(), RuntimeHandler: st.GetRuntimeHandler(),
	}
}

// containerItem is the container id as CRI lists it, for the watcher's
// snapshot, or nil as with sandboxItem. (Its status names the image
// otherwise than a listing does.)
func (r *criRuntime) containerItem(ctx context.Context, b *backend, id string) *criapi.Container {
	if !r.watch.watching() {
		return nil
	}
	items, err := b.listContainers(ctx, &criapi.ContainerFilter{Id: id})
	if err != nil {
		r.log.Warn("look up a new container for the snapshot; listings go to CRI until the next resync", "id", id, "err", err)
		return nil
	}
	for _, item := range items {
		if item.GetId() == id { // containerd takes the ID as a prefix
			return item
		}
	}
	return nil
}

// failed tells the watcher of a changing call that failed: one that may
// have taken effect makes the snapshot stale.
func (r *criRuntime) failed(err error) {
	if mayHaveTakenEffect(err) {
		r.watch.invalidate()
	}
}
