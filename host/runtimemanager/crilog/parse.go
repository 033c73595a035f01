package crilog

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// Streams of an entry.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// ErrMalformed: a line is not a CRI log entry.
var ErrMalformed = errors.New("malformed CRI log line")

// Entry is one parsed log line.
type Entry struct {
	Time   time.Time
	Stream string
	// Partial is true for a P entry: Text continues in the next entry.
	Partial bool
	// Text is the content, without the line's trailing newline. It aliases
	// the parsed line.
	Text []byte
}

// ParseLine parses one line (with or without its trailing "\n").
func ParseLine(line []byte) (Entry, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	ts, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return Entry{}, fmt.Errorf("%w: no stream", ErrMalformed)
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return Entry{}, fmt.Errorf("%w: time: %w", ErrMalformed, err)
	}
	stream, rest, ok := bytes.Cut(rest, []byte(" "))
	if !ok {
		return Entry{}, fmt.Errorf("%w: no tag", ErrMalformed)
	}
	e := Entry{Time: t, Stream: string(stream)}
	if e.Stream != Stdout && e.Stream != Stderr {
		return Entry{}, fmt.Errorf("%w: stream %q", ErrMalformed, stream)
	}
	tag, text, _ := bytes.Cut(rest, []byte(" "))
	// A tag may carry more flags after ':' in newer runtimes; the first
	// flag is the partial/full one.
	flag, _, _ := bytes.Cut(tag, []byte(":"))
	switch string(flag) {
	case "P":
		e.Partial = true
	case "F":
	default:
		return Entry{}, fmt.Errorf("%w: tag %q", ErrMalformed, tag)
	}
	e.Text = text
	return e, nil
}
