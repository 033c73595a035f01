package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDetachWaitsForTheLastClose checks that detach returns only once the
// kernel has released the device: with another process holding it open
// (as udev does while it probes a new device), losetup only marks it for
// clearing, and the DeleteVolume that follows an unstage found the image
// still attached (csi-sanity's idempotency spec failed so in CI once).
func TestDetachWaitsForTheLastClose(t *testing.T) {
	requireRoot(t)
	image := filepath.Join(t.TempDir(), "v.img")
	if err := os.WriteFile(image, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(image, 16<<20); err != nil {
		t.Fatal(err)
	}
	l := losetup{sysBlock: "/sys/block"}
	dev, err := l.attach(t.Context(), image)
	if err != nil {
		t.Fatal(err)
	}
	holder, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		<-time.After(300 * time.Millisecond)
		close(released)
		holder.Close()
	}()
	if err := l.detach(t.Context(), dev); err != nil {
		t.Fatalf("detach: %v", err)
	}
	select {
	case <-released:
	default:
		t.Fatal("detach returned while the device was still held open")
	}
	if got, err := l.find(image); err != nil || got != "" {
		t.Fatalf("after detach the image is attached at %q (%v); want nothing", got, err)
	}
}
