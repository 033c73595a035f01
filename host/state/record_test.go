package state

import (
	"bytes"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestDecodeRecord(t *testing.T) {
	good, err := encodeRecord(PodRecord{UID: "u", Status: v1.PodStatus{Phase: v1.PodFailed}, Terminal: true, Updated: t0})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"encoded", string(good), true},
		{"minimal", `{"v":1,"uid":"u","status":{},"terminal":false,"updated":"2026-01-01T00:00:00Z"}`, true},
		{"empty", ``, false},
		{"not json", `uid=u`, false},
		{"other version", `{"v":2,"uid":"u"}`, false},
		{"no uid", `{"v":1,"status":{"phase":"Running"}}`, false},
		{"unknown field", `{"v":1,"uid":"u","spec":{}}`, false},
		{"trailing data", `{"v":1,"uid":"u"} {}`, false},
		{"terminal flag disagrees", `{"v":1,"uid":"u","status":{"phase":"Running"},"terminal":true}`, false},
		{"phase terminal, flag not", `{"v":1,"uid":"u","status":{"phase":"Succeeded"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := decodeRecord([]byte(tt.in))
			if (err == nil) != tt.ok {
				t.Fatalf("decode = %+v, %v; want ok=%t", rec, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("error %v does not wrap ErrCorruptRecord", err)
			}
		})
	}
	rec, _ := decodeRecord(good)
	if rec.UID != "u" || !rec.Terminal || rec.Status.Phase != v1.PodFailed || !rec.Updated.Equal(t0) {
		t.Fatalf("round trip: %+v", rec)
	}
}

// FuzzDecodeRecord checks that any stored bytes decode without panicking,
// and that what decodes re-encodes to a value that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	seed, _ := encodeRecord(PodRecord{UID: "u", Status: running(1), Updated: time.Unix(0, 0)})
	f.Add(seed)
	f.Add([]byte(`{"v":1,"uid":"u","status":{"phase":"Failed"},"terminal":true}`))
	f.Add([]byte(`{"v":1,"uid":"u","status":{"containerStatuses":[{"name":"a","restartCount":-1}]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := decodeRecord(b)
		if err != nil {
			if !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("error %v does not wrap ErrCorruptRecord", err)
			}
			return
		}
		again, err := encodeRecord(rec)
		if err != nil {
			t.Fatalf("re-encoding a decoded record: %v", err)
		}
		rec2, err := decodeRecord(again)
		if err != nil {
			t.Fatalf("decoding a re-encoded record: %v\n%s", err, again)
		}
		third, _ := encodeRecord(rec2)
		if !bytes.Equal(again, third) {
			t.Fatalf("encoding is not stable:\n%s\n%s", again, third)
		}
	})
}
