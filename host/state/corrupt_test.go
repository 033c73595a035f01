package state

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	bolt "go.etcd.io/bbolt"

	"github.com/podhost/podhost/internal/testutil"
)

// realDatabase writes a database with enough pods to span many pages and
// returns its bytes.
func realDatabase(t *testing.T) []byte {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := openAt(t, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		name := "pod-" + string(rune('a'+i%26)) + strings.Repeat("x", i%7) + "-" + string(rune('0'+i%10)) + string(rune('a'+i/26))
		uid := types.UID("uid-" + name)
		if _, err := s.Track(ctx, "ns", name, uid); err != nil {
			t.Fatal(err)
		}
		st := running(int32(i))
		st.Message = strings.Repeat("m", 300)
		if err := s.Put(ctx, "ns", name, uid, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 16*os.Getpagesize() {
		t.Fatalf("real database is only %d bytes", len(b))
	}
	return b
}

// usedPage returns the first page from page from on that holds data (a
// branch or leaf page) in the database db. bbolt's page allocation varies
// from run to run, and scribbling a free page corrupts nothing.
func usedPage(t *testing.T, db []byte, from int) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pages.db")
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tx, err := b.Begin(true) // Page is safe only in a writable transaction
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for id := from; id < len(db)/os.Getpagesize(); id++ {
		info, err := tx.Page(id)
		if err != nil {
			t.Fatal(err)
		}
		if info != nil && (info.Type == "leaf" || info.Type == "branch") {
			return id
		}
	}
	t.Fatalf("no data page from page %d on", from)
	return 0
}

func TestCorruptDatabaseMovedAside(t *testing.T) {
	real := realDatabase(t)
	ps := os.Getpagesize()
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}
	scribbled := bytes.Clone(real)
	copy(scribbled[2*ps:], random(len(real)-2*ps))
	onePage := bytes.Clone(real)
	mid := usedPage(t, real, len(real)/ps/2) * ps
	copy(onePage[mid:mid+ps], random(ps))
	badMeta := bytes.Clone(real)
	copy(badMeta[16:], random(64))
	copy(badMeta[ps+16:], random(64))

	tests := []struct {
		name    string
		content func(t *testing.T) []byte
		reason  string
	}{
		{"random bytes", func(*testing.T) []byte { return random(3 * ps) }, "meta pages are invalid"},
		{"a few bytes", func(*testing.T) []byte { return []byte("{}\n") }, "too short"},
		{"truncated real database", func(*testing.T) []byte { return real[:len(real)/2] }, "truncated"},
		{"real database cut to its metas", func(*testing.T) []byte { return real[:2*ps] }, "truncated"},
		{"both meta pages scribbled", func(*testing.T) []byte { return badMeta }, "meta pages are invalid"},
		{"data pages scribbled", func(*testing.T) []byte { return scribbled }, ""},
		{"one page scribbled", func(*testing.T) []byte { return onePage }, ""},
		{"garbage schema", garbageSchema, "schema version"},
		{"meta is not a bucket", metaNotBucket, "not a bucket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), FileName)
			content := tt.content(t)
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			var logs testutil.SyncBuffer
			s, err := openAt(t, path, &logs)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			rec := s.Recovery()
			if rec == nil {
				t.Fatal("no recovery reported")
			}
			t.Logf("reason: %s", rec.Reason)
			if !strings.Contains(rec.Reason, tt.reason) {
				t.Errorf("reason %q does not mention %q", rec.Reason, tt.reason)
			}
			moved, err := os.ReadFile(rec.MovedTo)
			if err != nil || !bytes.Equal(moved, content) {
				t.Fatalf("moved-aside file %s: %v (same bytes: %t)", rec.MovedTo, err, bytes.Equal(moved, content))
			}
			if !strings.HasPrefix(rec.MovedTo, path+".corrupt-") {
				t.Errorf("moved to %s", rec.MovedTo)
			}
			out := logs.String()
			for _, want := range []string{"[ERROR]", "moved it aside", "terminal statuses of pods that finished before are lost", rec.MovedTo} {
				if !strings.Contains(out, want) {
					t.Errorf("log lacks %q:\n%s", want, out)
				}
			}
			// The fresh store works.
			if _, err := s.Track(ctx, "ns", "p", "u"); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, "ns", "p", "u", v1.PodStatus{Phase: v1.PodSucceeded}); err != nil {
				t.Fatal(err)
			}
			if list, err := s.List(ctx); err != nil || len(list) != 1 {
				t.Fatalf("list on fresh store: %v, %v", list, err)
			}
		})
	}
}

// garbageSchema is a sound bbolt file whose schema key is garbage.
func garbageSchema(t *testing.T) []byte {
	return rawBolt(t, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(keySchema, []byte("v?"))
	})
}

// metaNotBucket is a sound bbolt file whose "meta" is a plain key.
func metaNotBucket(t *testing.T) []byte {
	return rawBolt(t, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bucketPods)
		if err != nil {
			return err
		}
		_ = b
		return tx.Cursor().Bucket().Put(bucketMeta, []byte("x"))
	})
}

func rawBolt(t *testing.T, fill func(*bolt.Tx) error) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fill); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRepeatedCorruptionNeverLoops(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	for i := range 3 {
		if err := os.WriteFile(path, []byte("not a database"), 0o600); err != nil {
			t.Fatal(err)
		}
		// Every open uses the same test clock, so the names collide and a
		// suffix must keep the earlier files.
		s, err := openAt(t, path, nil)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if s.Recovery() == nil {
			t.Fatalf("open %d: no recovery", i)
		}
		_ = s.Close()
	}
	matches, _ := filepath.Glob(path + ".corrupt-*")
	if len(matches) != 3 {
		t.Fatalf("moved-aside files: %v", matches)
	}
	// A clean reopen reports nothing.
	s := mustOpen(t, path)
	if s.Recovery() != nil {
		t.Fatalf("clean reopen reports %+v", s.Recovery())
	}
}
