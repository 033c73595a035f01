package ownership

import (
	"io/fs"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestMode(t *testing.T) {
	tests := []struct {
		name     string
		in       fs.FileMode
		readOnly bool
		want     fs.FileMode
	}{
		{"a file gets group read and write", 0o644, false, 0o664},
		{"a private file", 0o600, false, 0o660},
		{"an executable file gets no group x", 0o700, false, 0o760},
		{"a file of a read-only volume gets group read only", 0o600, true, 0o640},
		{"a directory gets group rwx and setgid", fs.ModeDir | 0o700, false, fs.ModeDir | fs.ModeSetgid | 0o770},
		{"a directory of a read-only volume", fs.ModeDir | 0o700, true, fs.ModeDir | fs.ModeSetgid | 0o750},
		{"the sticky bit stays (a tmpfs root)", fs.ModeDir | fs.ModeSticky | 0o777, false, fs.ModeDir | fs.ModeSetgid | fs.ModeSticky | 0o777},
		{"setuid stays", fs.ModeSetuid | 0o755, false, fs.ModeSetuid | 0o775},
		{"a symbolic link keeps its mode", fs.ModeSymlink | 0o777, false, fs.ModeSymlink | 0o777},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Mode(tt.in, tt.readOnly); got != tt.want {
				t.Errorf("Mode(%v, %v) = %v, want %v", tt.in, tt.readOnly, got, tt.want)
			}
		})
	}
}

func TestSkip(t *testing.T) {
	onRoot := Options{FSGroup: 1234, Policy: v1.FSGroupChangeOnRootMismatch}
	tests := []struct {
		name string
		mode fs.FileMode
		gid  int64
		o    Options
		want bool
	}{
		{"root already right", fs.ModeDir | fs.ModeSetgid | 0o770, 1234, onRoot, true},
		{"root with more bits", fs.ModeDir | fs.ModeSetgid | 0o777, 1234, onRoot, true},
		{"another group", fs.ModeDir | fs.ModeSetgid | 0o770, 0, onRoot, false},
		{"no setgid", fs.ModeDir | 0o770, 1234, onRoot, false},
		{"no group write", fs.ModeDir | fs.ModeSetgid | 0o750, 1234, onRoot, false},
		{"read-only needs no write", fs.ModeDir | fs.ModeSetgid | 0o750, 1234, Options{FSGroup: 1234, Policy: v1.FSGroupChangeOnRootMismatch, ReadOnly: true}, true},
		{"a file root is never skipped", fs.ModeSetgid | 0o770, 1234, onRoot, false},
		{"Always walks", fs.ModeDir | fs.ModeSetgid | 0o770, 1234, Options{FSGroup: 1234, Policy: v1.FSGroupChangeAlways}, false},
		{"no policy walks", fs.ModeDir | fs.ModeSetgid | 0o770, 1234, Options{FSGroup: 1234}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := skip(tt.mode, tt.gid, tt.o); got != tt.want {
				t.Errorf("skip(%v, %d, %+v) = %v, want %v", tt.mode, tt.gid, tt.o, got, tt.want)
			}
		})
	}
}
