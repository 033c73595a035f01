package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"time"
)

// bbolt's on-disk meta page, read here so that a damaged file is rejected
// before bbolt maps it: bbolt trusts the meta page's page count, and reading
// pages past the end of a truncated file is a fatal memory fault, not an
// error. Layout (native byte order): a 16-byte page header, then magic,
// version, pageSize, flags (uint32 each), the root bucket (root page,
// sequence: uint64 each), freelist page, page count, txid, checksum (uint64
// each). The checksum is FNV-64a of the meta bytes before it.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16
	metaSize       = 4*4 + 8*2 + 8*4
	noFreelist     = ^uint64(0)
	minPageSize    = 512
	maxPageSize    = 1 << 20
)

type metaPage struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

// parseMeta decodes and validates one meta page's bytes (starting after the
// page header).
func parseMeta(b []byte) (metaPage, error) {
	if len(b) < metaSize {
		return metaPage{}, errors.New("short meta page")
	}
	e := binary.NativeEndian
	if e.Uint32(b[0:]) != boltMagic {
		return metaPage{}, errors.New("not a bbolt file (bad magic)")
	}
	if v := e.Uint32(b[4:]); v != boltVersion {
		return metaPage{}, fmt.Errorf("bbolt format version %d", v)
	}
	h := fnv.New64a()
	_, _ = h.Write(b[:metaSize-8])
	if h.Sum64() != e.Uint64(b[metaSize-8:]) {
		return metaPage{}, errors.New("meta page checksum error")
	}
	m := metaPage{pageSize: e.Uint32(b[8:]), root: e.Uint64(b[16:]), freelist: e.Uint64(b[32:]),
		pgid: e.Uint64(b[40:]), txid: e.Uint64(b[48:])}
	if m.pageSize < minPageSize || m.pageSize > maxPageSize || m.pageSize&(m.pageSize-1) != 0 {
		return metaPage{}, fmt.Errorf("page size %d", m.pageSize)
	}
	return m, nil
}

// validateFile checks that data (the head of the file, at least two pages
// when available) and the file size describe a usable bbolt file. It
// returns "" when the file is empty or sound, else the reason.
func validateFile(head []byte, size int64) string {
	if size == 0 {
		return ""
	}
	if len(head) < pageHeaderSize+metaSize {
		return fmt.Sprintf("file is %d bytes, too short for a database", size)
	}
	m0, err0 := parseMeta(head[pageHeaderSize:])
	// The second meta page follows the first page; its size comes from the
	// first meta when that is valid, else from the OS page size as bbolt
	// assumes.
	ps := os.Getpagesize()
	if err0 == nil {
		ps = int(m0.pageSize)
	}
	var m1 metaPage
	err1 := errors.New("missing second meta page")
	if len(head) >= ps+pageHeaderSize+metaSize {
		m1, err1 = parseMeta(head[ps+pageHeaderSize:])
	}
	var m metaPage
	switch {
	case err0 != nil && err1 != nil:
		return fmt.Sprintf("both meta pages are invalid: %v; %v", err0, err1)
	case err0 != nil:
		m = m1
	case err1 != nil || m0.txid >= m1.txid:
		m = m0
	default:
		m = m1
	}
	need := int64(m.pgid) * int64(m.pageSize)
	switch {
	case m.pgid < 3 || m.pgid > uint64(size):
		return fmt.Sprintf("meta page count %d is impossible for a %d-byte file", m.pgid, size)
	case size < need:
		return fmt.Sprintf("file is truncated: %d bytes, the meta page needs %d", size, need)
	case m.root < 2 || m.root >= m.pgid:
		return fmt.Sprintf("root page %d out of range [2, %d)", m.root, m.pgid)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		return fmt.Sprintf("freelist page %d out of range [2, %d)", m.freelist, m.pgid)
	}
	return ""
}

// inspect validates the file under an exclusive lock, so that a database in
// use by another host is reported as locked and never judged or moved. It
// returns the reason the file is unusable, or "".
func inspect(path string, lockTimeout time.Duration) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("opening state database %s: %w", path, err)
	}
	defer f.Close()
	if err := lockFile(f, lockTimeout); err != nil {
		return "", fmt.Errorf("opening %s: %w", path, err)
	}
	defer unlockFile(f)
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("reading state database %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("state database %s is not a regular file", path)
	}
	head := make([]byte, 2*maxPageSize)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading state database %s: %w", path, err)
	}
	return validateFile(head[:n], info.Size()), nil
}

// panicError is a panic or memory fault caught while bbolt read a file.
type panicError struct{ v any }

func (p *panicError) Error() string { return fmt.Sprintf("reading the database panicked: %v", p.v) }

// guarded runs fn and turns a panic, or a memory fault in this goroutine,
// into an error. When bolt.Open panics, the file descriptor it had opened
// leaks; the file is then moved aside, so its lock does not matter.
func guarded(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{v: r}
		}
	}()
	return fn()
}
