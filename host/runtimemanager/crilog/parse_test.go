package crilog

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		line    string
		want    Entry
		wantErr bool
	}{
		{line: "2024-05-01T10:00:00.123456789Z stdout F hello world\n", want: Entry{Time: time.Date(2024, 5, 1, 10, 0, 0, 123456789, time.UTC), Stream: Stdout, Text: []byte("hello world")}},
		{line: "2024-05-01T10:00:00Z stderr P part", want: Entry{Time: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), Stream: Stderr, Partial: true, Text: []byte("part")}},
		{line: "2024-05-01T10:00:00Z stdout F", want: Entry{Time: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), Stream: Stdout, Text: []byte{}}},
		{line: "2024-05-01T10:00:00Z stdout F:x  two spaces", want: Entry{Time: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), Stream: Stdout, Text: []byte(" two spaces")}},
		{line: "yesterday stdout F x", wantErr: true},
		{line: "2024-05-01T10:00:00Z stdin F x", wantErr: true},
		{line: "2024-05-01T10:00:00Z stdout X x", wantErr: true},
		{line: "2024-05-01T10:00:00Z", wantErr: true},
		{line: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseLine([]byte(tt.line))
		if tt.wantErr {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("ParseLine(%q) error = %v; want ErrMalformed", tt.line, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseLine(%q): %v", tt.line, err)
			continue
		}
		if !got.Time.Equal(tt.want.Time) || got.Stream != tt.want.Stream || got.Partial != tt.want.Partial || !bytes.Equal(got.Text, tt.want.Text) {
			t.Errorf("ParseLine(%q) = %+v; want %+v", tt.line, got, tt.want)
		}
	}
}

// FuzzParseLine checks that ParseLine never panics and that every entry it
// accepts survives AppendEntry and a second parse unchanged.
func FuzzParseLine(f *testing.F) {
	f.Add([]byte("2024-05-01T10:00:00.123456789Z stdout F hello world\n"))
	f.Add([]byte("2024-05-01T10:00:00Z stderr P part"))
	f.Add([]byte("2024-05-01T10:00:00+02:00 stdout F:x a"))
	f.Add([]byte("x y z"))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseLine(line)
		if err != nil {
			return
		}
		if bytes.IndexByte(e.Text, '\n') >= 0 {
			return // not encodable as one entry
		}
		again, err := ParseLine(AppendEntry(nil, e.Time, e.Stream, e.Partial, e.Text))
		if err != nil {
			t.Fatalf("re-parsing the encoding of %+v: %v", e, err)
		}
		if !again.Time.Equal(e.Time) || again.Stream != e.Stream || again.Partial != e.Partial || !bytes.Equal(again.Text, e.Text) {
			t.Fatalf("round trip: got %+v; want %+v", again, e)
		}
	})
}

// AppendEntry (test support: the runtime writes the files) appends the CRI encoding of one entry, newline included. A
// newline inside text is not allowed by the format; the runtime splits
// such text into entries, and so should callers.
func AppendEntry(dst []byte, t time.Time, stream string, partial bool, text []byte) []byte {
	dst = t.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, ' ')
	dst = append(dst, stream...)
	if partial {
		dst = append(dst, " P "...)
	} else {
		dst = append(dst, " F "...)
	}
	dst = append(dst, text...)
	return append(dst, '\n')
}
