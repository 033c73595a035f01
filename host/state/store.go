package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// FileName is the database's file name under the host's root directory.
const FileName = "state.db"

// SchemaVersion is the layout of buckets and values this build writes.
const SchemaVersion = 1

// DefaultLockTimeout bounds how long Open waits for the file lock held by
// another process before giving up.
const DefaultLockTimeout = 3 * time.Second

// Errors of Open that need an operator.
var (
	// ErrLocked means another process holds the database.
	ErrLocked = errors.New("database is locked by another host?")
	// ErrSchemaTooNew means a newer build wrote the database; it is left
	// untouched.
	ErrSchemaTooNew = errors.New("state database schema is newer than this build")
)

// errBadMeta means the database's own meta bucket holds garbage: the file
// is treated as unusable.
var errBadMeta = errors.New("unreadable meta bucket")

// The buckets. Files written by older builds may also hold a "plugins"
// bucket (plugin records nothing read); it is left alone.
var (
	bucketMeta    = []byte("meta")
	bucketPods    = []byte("pods")
	bucketHistory = []byte("history")
	bucketAPIPods = []byte("apipods")
	bucketVolumes = []byte("volumes")
	// bucketAPIObjects holds the ConfigMaps and Secrets applied through
	// the local API (apiobjects.go); older files lack it until opened.
	bucketAPIObjects = []byte("apiobjects")
	keySchema        = []byte("schema")
)

// Recovery says that Open found the database unusable and started over.
type Recovery struct {
	// MovedTo is where the unusable file now is.
	MovedTo string
	// Reason is why it was unusable.
	Reason string
	// Time is when it was moved.
	Time time.Time
}

// Store is the host's local database. Its methods are safe for concurrent
// use.
type Store struct {
	db       *bolt.DB
	log      hclog.Logger
	now      func() time.Time
	recovery *Recovery
	apiPods  apiPodWriter
}

// options are Open's knobs; tests shorten the lock timeout and fix the clock.
type options struct {
	lockTimeout time.Duration
	now         func() time.Time
}

// Open opens or creates the database at path (normally
// <rootDir>/state.db) with mode 0600. An unusable file is moved aside and
// replaced by an empty database (see Recovery); a locked file, an
// unwritable directory or a newer schema are errors. A nil logger discards.
func Open(path string, logger hclog.Logger) (*Store, error) {
	return open(path, logger, options{lockTimeout: DefaultLockTimeout, now: time.Now})
}

func open(path string, logger hclog.Logger, o options) (*Store, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	s := &Store{log: logger, now: o.now}
	reason, err := inspect(path, o.lockTimeout)
	if err != nil {
		return nil, err
	}
	if reason == "" {
		if s.db, reason, err = openChecked(path, o.lockTimeout); err != nil {
			return nil, err
		}
	}
	if reason == "" {
		err = s.initSchema()
		if err == nil {
			return s, nil
		}
		_ = s.db.Close()
		if !errors.Is(err, errBadMeta) {
			return nil, err
		}
		reason = err.Error()
	}
	if err := s.recover(path, reason, o.lockTimeout); err != nil {
		return nil, err
	}
	if err := s.initSchema(); err != nil {
		_ = s.db.Close()
		return nil, fmt.Errorf("initialising fresh state database: %w", err)
	}
	return s, nil
}

// openChecked opens the file with bbolt and runs its consistency check.
// A non-empty reason means the file is unusable (the db is then closed or
// was never opened); err is for everything an operator must fix.
func openChecked(path string, lockTimeout time.Duration) (db *bolt.DB, reason string, err error) {
	db, err = boltOpen(path, lockTimeout)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, "", fmt.Errorf("opening %s: %w (waited %s)", path, ErrLocked, lockTimeout)
	case isCorruption(err):
		return nil, err.Error(), nil
	case err != nil:
		return nil, "", fmt.Errorf("opening state database %s: %w", path, err)
	}
	if err := check(db); err != nil {
		_ = db.Close()
		return nil, err.Error(), nil
	}
	return db, "", nil
}

// boltOpen is bolt.Open that turns a panic or a memory fault while reading a
// damaged file into an error.
func boltOpen(path string, lockTimeout time.Duration) (db *bolt.DB, err error) {
	err = guarded(func() error {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
		return err
	})
	return db, err
}

// check runs bbolt's consistency check and reads every value of ours.
func check(db *bolt.DB) error {
	return guarded(func() error {
		return db.View(func(tx *bolt.Tx) error {
			var first error
			for err := range tx.Check() {
				if first == nil {
					first = fmt.Errorf("consistency check: %w", err)
				}
			}
			return first
		})
	})
}

func isCorruption(err error) bool {
	var p *panicError
	return errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch) ||
		errors.Is(err, berrors.ErrChecksum) || errors.As(err, &p)
}

// recover moves the unusable file aside and opens a fresh database.
func (s *Store) recover(path, reason string, lockTimeout time.Duration) error {
	now := s.now()
	aside := fmt.Sprintf("%s.corrupt-%s", path, now.UTC().Format("20060102T150405.000000000Z"))
	for i := 1; exists(aside); i++ {
		aside = fmt.Sprintf("%s.corrupt-%s-%d", path, now.UTC().Format("20060102T150405.000000000Z"), i)
	}
	if err := os.Rename(path, aside); err != nil {
		return fmt.Errorf("state database %s is unusable (%s) and cannot be moved aside: %w", path, reason, err)
	}
	s.log.Error("state database is unusable; moved it aside and starting with an empty one: "+
		"rebuilding from the runtime; terminal statuses of pods that finished before are lost",
		"path", path, "moved_to", aside, "reason", reason)
	db, again, err := openChecked(path, lockTimeout)
	if err != nil {
		return err
	}
	if again != "" {
		return fmt.Errorf("fresh state database %s is unusable: %s", path, again)
	}
	s.db = db
	s.recovery = &Recovery{MovedTo: aside, Reason: reason, Time: now}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// initSchema creates the buckets and checks the schema version.
func (s *Store) initSchema() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if errors.Is(err, berrors.ErrIncompatibleValue) {
			return fmt.Errorf("%w: meta is not a bucket", errBadMeta)
		}
		if err != nil {
			return fmt.Errorf("creating meta bucket: %w", err)
		}
		if v := meta.Get(keySchema); v != nil {
			n, err := strconv.Atoi(string(v))
			if err != nil || n < 1 {
				return fmt.Errorf("%w: schema version %q", errBadMeta, v)
			}
			if n > SchemaVersion {
				return fmt.Errorf("%s has schema %d, this build knows %d (downgrade? restore the newer host or move the file aside): %w",
					s.db.Path(), n, SchemaVersion, ErrSchemaTooNew)
			}
		}
		for _, b := range [][]byte{bucketPods, bucketHistory, bucketAPIPods, bucketVolumes, bucketAPIObjects} {
			_, err := tx.CreateBucketIfNotExists(b)
			if errors.Is(err, berrors.ErrIncompatibleValue) {
				return fmt.Errorf("%w: %s is not a bucket", errBadMeta, b)
			}
			if err != nil {
				return fmt.Errorf("creating bucket %s: %w", b, err)
			}
		}
		return meta.Put(keySchema, []byte(strconv.Itoa(SchemaVersion)))
	})
}

// Recovery returns what Open did with an unusable database, or nil when the
// database opened cleanly. The host should emit a DatabaseRecovered event.
func (s *Store) Recovery() *Recovery {
	if s.recovery == nil {
		return nil
	}
	r := *s.recovery
	return &r
}

// Path is the database file.
func (s *Store) Path() string { return s.db.Path() }

// Close releases the database and its lock.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing state database: %w", err)
	}
	return nil
}
