package crilog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// pollInterval is how often a followed file is checked for new data.
const pollInterval = 250 * time.Millisecond

// Options choose what Copy writes.
type Options struct {
	// Follow keeps reading what the runtime appends until ctx is done, or
	// until Done (when set) reports true at the end of the file: the
	// container exited and nothing more will be written.
	Follow bool
	Done   func() bool
	// Timestamps starts each line with the time of its first entry
	// (RFC3339Nano) and a space.
	Timestamps bool
	// Since, when set, leaves out the lines whose first entry is older.
	Since time.Time
	// Tail, when not negative, starts that many lines before the end of
	// what the file holds when Copy opens it. Negative means every line.
	Tail int
}

// Copy copies the text of the CRI log file at path to w: each full entry
// followed by a newline, partial entries joined with the next. Malformed
// lines are skipped. Without opts.Follow it returns at the end of the
// file; with it, it keeps reading what the runtime appends until ctx is
// done (or opts.Done reports true at the end of the file), and then
// returns nil. A line still being written (no newline yet) is held back
// until it is complete. When the log is rotated (the file renamed and a
// new one made at path), following goes on with the new file once the old
// one is read to its end.
func Copy(ctx context.Context, w io.Writer, path string, opts Options) error {
	return copyLog(ctx, w, path, opts, func() <-chan time.Time { return time.After(pollInterval) })
}

// copyLog is Copy with the poll wait injected.
func copyLog(ctx context.Context, w io.Writer, path string, opts Options, wait func() <-chan time.Time) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening log: %w", err)
	}
	defer func() { f.Close() }()
	r := bufio.NewReaderSize(f, 64*1024)
	out := &lineWriter{bw: bufio.NewWriter(w), opts: opts, tailing: opts.Tail >= 0}
	follow := opts.Follow
	var pending []byte // a line without its newline yet
	moving := false    // f was rotated away: read it to its end once more, then open path again
	for {
		chunk, err := r.ReadBytes('\n')
		pending = append(pending, chunk...)
		if err == nil {
			out.entry(pending)
			pending = pending[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading log: %w", err)
		}
		if !follow {
			if len(pending) > 0 {
				out.entry(pending)
			}
			out.end()
			return out.flush()
		}
		if moving {
			if next, err := os.Open(path); err == nil {
				if len(pending) > 0 {
					out.entry(pending)
				}
				f.Close()
				f, moving, pending = next, false, pending[:0]
				r.Reset(f)
				continue
			}
		}
		out.endTail()
		if err := out.flush(); err != nil {
			return err
		}
		if replaced(f, path) {
			moving = true
			continue
		}
		if opts.Done != nil && opts.Done() {
			// Nothing more will be written: copy what came meanwhile.
			follow = false
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wait():
		}
	}
}

// lineWriter turns entries into lines: partial entries joined, with the
// time in front when asked, old lines left out, and while tailing only the
// last lines kept until the end of the file is reached.
type lineWriter struct {
	bw   *bufio.Writer
	opts Options
	// line is the line being joined from partial entries; skip says it is
	// older than Since.
	line    []byte
	started bool
	skip    bool
	// tailing holds back lines in tail until the first end of file.
	tailing bool
	tail    [][]byte
}

// entry adds one CRI line; a malformed one is skipped.
func (l *lineWriter) entry(raw []byte) {
	e, err := ParseLine(raw)
	if err != nil {
		return
	}
	if !l.started {
		l.started = true
		l.skip = !l.opts.Since.IsZero() && e.Time.Before(l.opts.Since)
		if l.opts.Timestamps {
			l.line = e.Time.UTC().AppendFormat(l.line, time.RFC3339Nano)
			l.line = append(l.line, ' ')
		}
	}
	l.line = append(l.line, e.Text...)
	if !e.Partial {
		l.line = append(l.line, '\n')
		l.emit()
	}
}

// end emits a line left partial at the end of the file, and the tail.
func (l *lineWriter) end() {
	if l.started {
		l.emit()
	}
	l.endTail()
}

func (l *lineWriter) emit() {
	line, skip := l.line, l.skip
	l.line, l.started, l.skip = nil, false, false
	switch {
	case skip:
	case l.tailing:
		if l.opts.Tail == 0 {
			return
		}
		if len(l.tail) == l.opts.Tail {
			l.tail = l.tail[1:]
		}
		l.tail = append(l.tail, line)
	default:
		_, _ = l.bw.Write(line) // write errors surface at flush
	}
}

// endTail writes the held-back tail; from then on lines pass.
func (l *lineWriter) endTail() {
	if !l.tailing {
		return
	}
	l.tailing = false
	for _, line := range l.tail {
		_, _ = l.bw.Write(line)
	}
	l.tail = nil
}

func (l *lineWriter) flush() error {
	if err := l.bw.Flush(); err != nil {
		return fmt.Errorf("writing log: %w", err)
	}
	return nil
}
