package manifest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"

	"github.com/podhost/podhost/sources"
)

// DefaultRescan is the rescan interval when Options.Rescan is zero; the
// kubelet checks its manifest directory every 20 s too.
const DefaultRescan = 20 * time.Second

// Options configure a Source.
type Options struct {
	// Dir is the manifest directory.
	Dir string
	// NodeName is appended to pod names and hashed into UIDs.
	NodeName string
	// Rescan is how often the directory is read even without a
	// notification; DefaultRescan when zero.
	Rescan time.Duration
	// Now gives the config.seen time of newly decoded files; time.Now when
	// nil.
	Now func() time.Time
	// Logger gets watch failures; none when nil.
	Logger hclog.Logger
}

// Source is the manifest directory source. Run drives it; Updates and
// Synced may be read from any goroutine.
type Source struct {
	opts    Options
	updates chan sources.Snapshot
	synced  chan struct{}

	// Owned by Run.
	files    map[string]cached
	watching bool
	last     string
	sent     bool
}

// cached is a decoded file and the hash of the bytes it came from.
type cached struct {
	sum  [sha256.Size]byte
	file File
}

// NewSource returns a source for opts.Dir; call Run to start it.
func NewSource(opts Options) *Source {
	if opts.Rescan <= 0 {
		opts.Rescan = DefaultRescan
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Source{
		opts:    opts,
		updates: make(chan sources.Snapshot, 1),
		synced:  make(chan struct{}),
		files:   map[string]cached{},
	}
}

// Updates delivers a complete snapshot whenever the directory's result
// changed. It holds only the newest: a snapshot not yet received is
// replaced by a newer one, so a slow reader skips straight to the present.
func (s *Source) Updates() <-chan sources.Snapshot { return s.updates }

// Synced is closed when the first snapshot is put on Updates: whoever
// received a snapshot finds it closed.
func (s *Source) Synced() <-chan struct{} { return s.synced }

// Run watches the directory until ctx is done, then returns nil. It fails
// only if no watcher can be created. Call it once.
func (s *Source) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("starting manifest watcher: %w", err)
	}
	defer w.Close()
	tick := time.NewTicker(s.opts.Rescan)
	defer tick.Stop()

	s.refresh(w)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) == filepath.Clean(s.opts.Dir) && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				s.watching = false
			} else if ignored(filepath.Base(ev.Name)) {
				continue
			}
			s.refresh(w)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			s.opts.Logger.Warn("manifest watch failed, rescanning", "dir", s.opts.Dir, "err", err)
			s.refresh(w)
		case <-tick.C:
			s.refresh(w)
		}
	}
}

// refresh (re)establishes the watch, rescans and sends a snapshot if the
// result changed. The watch comes first so no change falls between.
func (s *Source) refresh(w *fsnotify.Watcher) {
	if !s.watching {
		if err := w.Add(s.opts.Dir); err == nil {
			s.watching = true
		} else if !errors.Is(err, fs.ErrNotExist) {
			s.opts.Logger.Warn("cannot watch manifest directory, relying on rescans", "dir", s.opts.Dir, "err", err)
		}
	}
	dirErr := s.scan()
	if dirErr != nil && errors.Is(dirErr, fs.ErrNotExist) {
		s.watching = false
	}
	snap, fingerprint := s.snapshot(dirErr)
	if s.sent && fingerprint == s.last {
		return
	}
	s.last = fingerprint
	select {
	case <-s.updates: // drop the unread, older snapshot
	default:
	}
	if !s.sent {
		// Closed before the send, so a reader of the first snapshot finds
		// Synced closed.
		s.sent = true
		close(s.synced)
	}
	s.updates <- snap // never blocks: Run is the only sender
}

// scan reads the directory into s.files. A file that cannot be read keeps
// its last result plus an error, and an unreadable directory keeps them
// all: a transient failure must not stop pods.
func (s *Source) scan() error {
	entries, err := os.ReadDir(s.opts.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		s.files = map[string]cached{}
		return fmt.Errorf("manifest directory %s: %w", s.opts.Dir, err)
	}
	if err != nil {
		return fmt.Errorf("reading manifest directory: %w", err)
	}
	files := map[string]cached{}
	for _, e := range entries {
		if ignored(e.Name()) {
			continue
		}
		path := filepath.Join(s.opts.Dir, e.Name())
		if c, ok := s.read(path); ok {
			files[path] = c
		}
	}
	s.files = files
	return nil
}

// read decodes path, reusing the last result when the bytes are the same.
// It reports false for what is not (or no longer) a regular file.
func (s *Source) read(path string) (cached, bool) {
	info, err := os.Stat(path) // follows symlinks
	if err == nil && !info.Mode().IsRegular() {
		return cached{}, false
	}
	var data []byte
	if err == nil {
		if info.Size() > MaxFileSize {
			data = make([]byte, MaxFileSize+1) // Decode reports it
		} else {
			data, err = os.ReadFile(path)
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return cached{}, false
	}
	if err != nil {
		c := s.files[path]
		c.file.Path = path
		c.file.Errors = append(c.file.Errors[:len(c.file.Errors):len(c.file.Errors)], &DocumentError{Path: path, Err: fmt.Errorf("reading: %w", err)})
		c.sum = [sha256.Size]byte{} // decode again once readable
		return c, true
	}
	sum := sha256.Sum256(data)
	if c, ok := s.files[path]; ok && c.sum == sum {
		return c, true
	}
	f := Decode(path, data, s.opts.NodeName, s.opts.Now())
	if len(f.Pods)+len(f.Volumes)+len(f.Claims)+len(f.ConfigMaps)+len(f.Secrets)+len(f.Errors) == 0 {
		// Like a file whose objects do not decode, it yields no pod: say so.
		f.Errors = append(f.Errors, &DocumentError{Path: path, Err: ErrNoObject})
	}
	return cached{sum: sum, file: f}, true
}

// snapshot assembles a deep copy of the current result, in path order, and
// a fingerprint that changes whenever the result does.
func (s *Source) snapshot(dirErr error) (sources.Snapshot, string) {
	paths := make([]string, 0, len(s.files))
	for p := range s.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	snap := sources.Snapshot{Source: sources.SourceFile}
	var fp strings.Builder
	if dirErr != nil {
		snap.Errors = append(snap.Errors, dirErr)
		fmt.Fprintf(&fp, "dir %v\n", dirErr)
	}
	for _, p := range paths {
		c := s.files[p]
		fmt.Fprintf(&fp, "%s %x\n", p, c.sum)
		for _, pod := range c.file.Pods {
			pod.Pod = pod.Pod.DeepCopy()
			snap.Pods = append(snap.Pods, pod)
		}
		for _, v := range c.file.Volumes {
			v.Volume = v.Volume.DeepCopy()
			snap.Volumes = append(snap.Volumes, v)
		}
		for _, cl := range c.file.Claims {
			cl.Claim = cl.Claim.DeepCopy()
			snap.Claims = append(snap.Claims, cl)
		}
		for _, cm := range c.file.ConfigMaps {
			cm.ConfigMap = cm.ConfigMap.DeepCopy()
			snap.ConfigMaps = append(snap.ConfigMaps, cm)
		}
		for _, sec := range c.file.Secrets {
			sec.Secret = sec.Secret.DeepCopy()
			snap.Secrets = append(snap.Secrets, sec)
		}
		for _, err := range c.file.Errors {
			snap.Errors = append(snap.Errors, err)
			fmt.Fprintf(&fp, "err %v\n", err)
		}
	}
	return snap, fp.String()
}

// ignored reports whether a file name is a dotfile or an editor's
// temporary or backup file.
func ignored(name string) bool {
	switch {
	case strings.HasPrefix(name, "."), strings.HasPrefix(name, "#"),
		strings.HasSuffix(name, "~"), strings.HasSuffix(name, ".swp"),
		strings.HasSuffix(name, ".swx"), strings.HasSuffix(name, ".tmp"),
		name == "4913": // vim's write-permission probe
		return true
	}
	return false
}
