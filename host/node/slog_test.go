package node

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestSlogIntoHclog(t *testing.T) {
	var buf bytes.Buffer
	l := newSlog(hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info, Name: "host"}))
	l.Debug("hidden", "pod", "ns/a")
	l.With("uid", "u1").WithGroup("sync").Warn("pod sync failed", "pod", "ns/b", "err", "boom")
	out := buf.String()
	if strings.Contains(out, "hidden") {
		t.Errorf("debug line logged at info level:\n%s", out)
	}
	for _, want := range []string{"[WARN]", "host: pod sync failed", "uid=u1", "sync.pod=ns/b", "sync.err=boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
