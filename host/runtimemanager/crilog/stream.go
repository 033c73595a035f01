package crilog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// pollInterval is how often a followed file is checked for new data.
const pollInterval = 250 * time.Millisecond

// Stream copies the text of the CRI log file at path to w: each full entry
// followed by a newline, partial entries joined with the next. Malformed
// lines are skipped. Without follow it returns at the end of the file;
// with follow it keeps reading what the runtime appends until ctx is done,
// and then returns nil. A line still being written (no newline yet) is
// held back until it is complete. When the log is rotated (the file renamed
// and a new one made at path), following goes on with the new file once
// the old one is read to its end.
func Stream(ctx context.Context, w io.Writer, path string, follow bool) error {
	return stream(ctx, w, path, follow, nil, func() <-chan time.Time { return time.After(pollInterval) })
}

// Follow is Stream with follow that also ends once done reports true at
// the end of the file (the container exited and nothing more will be
// written): what is left is copied and Follow returns nil.
func Follow(ctx context.Context, w io.Writer, path string, done func() bool) error {
	return stream(ctx, w, path, true, done, func() <-chan time.Time { return time.After(pollInterval) })
}

// stream is Stream with the end check and the poll wait injected.
func stream(ctx context.Context, w io.Writer, path string, follow bool, done func() bool, wait func() <-chan time.Time) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening log: %w", err)
	}
	defer func() { f.Close() }()
	r := bufio.NewReaderSize(f, 64*1024)
	bw := bufio.NewWriter(w)
	var pending []byte // a line without its newline yet
	moving := false    // f was rotated away: read it to its end once more, then open path again
	for {
		chunk, err := r.ReadBytes('\n')
		pending = append(pending, chunk...)
		if err == nil {
			writeEntry(bw, pending)
			pending = pending[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading log: %w", err)
		}
		if !follow {
			if len(pending) > 0 {
				writeEntry(bw, pending)
			}
			return flush(bw)
		}
		if moving {
			if next, err := os.Open(path); err == nil {
				if len(pending) > 0 {
					writeEntry(bw, pending)
				}
				f.Close()
				f, moving, pending = next, false, pending[:0]
				r.Reset(f)
				continue
			}
		}
		if err := flush(bw); err != nil {
			return err
		}
		if replaced(f, path) {
			moving = true
			continue
		}
		if done != nil && done() {
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

func flush(bw *bufio.Writer) error {
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing log: %w", err)
	}
	return nil
}

// writeEntry writes the text of one line; write errors surface at flush.
func writeEntry(bw *bufio.Writer, line []byte) {
	e, err := ParseLine(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		return
	}
	_, _ = bw.Write(e.Text)
	if !e.Partial {
		_ = bw.WriteByte('\n')
	}
}
