package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/host/localapi"
)

// TestStateCorruptDatabase: garbage written over state.db while the host is
// stopped does not stop the next host: it moves the file aside with an
// ERROR line, records a DatabaseRecovered event, and runs the manifest's
// pod again.
func TestStateCorruptDatabase(t *testing.T) {
	h := startPodHost(t)
	name := staticName(t, "survivor")
	h.writeManifest("survivor.yaml", staticManifest("survivor", "alive"))
	h.waitPod(name, 60*time.Second, "running", running)
	h.sigtermHost()

	db := filepath.Join(h.root, "state.db")
	garbage := []byte(strings.Repeat("this is not a bbolt database\n", 512))
	if err := os.WriteFile(db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	h.start()
	pid := h.hostPID()
	h.waitPod(name, 60*time.Second, "running again", running)

	h.mu.Lock()
	logPath := h.logs[len(h.logs)-1]
	h.mu.Unlock()
	log, _ := os.ReadFile(logPath)
	var loud string
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, "[ERROR]") && strings.Contains(line, "state database is unusable") && strings.Contains(line, "moved_to=") {
			loud = line
		}
	}
	if loud == "" {
		t.Errorf("no ERROR line about moving the database aside in the host log:\n%s", h.logTail())
	}
	moved, _ := filepath.Glob(db + ".corrupt-*")
	if len(moved) != 1 {
		t.Fatalf("moved-aside files %v; want one", moved)
	}
	if b, _ := os.ReadFile(moved[0]); string(b) != string(garbage) {
		t.Errorf("%s does not hold the garbage that was written", moved[0])
	}
	evs, err := h.client.Events(t.Context(), localapi.EventFilter{Kind: "Node"})
	if err != nil || !hasEvent(evs, "DatabaseRecovered", filepath.Base(moved[0])) {
		t.Errorf("no DatabaseRecovered event naming %s: %v\n%s", moved[0], err, eventsString(evs))
	}
	if out, err := h.hostCLI(t.Context(), "events"); err != nil || !strings.Contains(out, "DatabaseRecovered") {
		t.Errorf("podhost events does not show DatabaseRecovered: %v\n%s", err, out)
	}
	if got := h.hostPID(); got != pid || !processAlive(pid) {
		t.Errorf("host pid %d → %d: the host did not keep running", pid, got)
	}
}
