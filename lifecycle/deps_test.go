package lifecycle_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestForbiddenImports keeps transports and process execution out of the
// non-test import graph of lifecycle and its subpackages.
func TestForbiddenImports(t *testing.T) {
	forbidden := []string{
		"google.golang.org/grpc",
		"github.com/hashicorp/go-plugin",
		"github.com/podhost/podhost/proto",
		"os/exec",
		"testing",
	}
	for _, pkg := range []string{"github.com/podhost/podhost/lifecycle"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list returned too few packages: %q", deps)
		}
		for _, dep := range deps {
			for _, bad := range forbidden {
				if dep == bad || strings.HasPrefix(dep, bad+"/") {
					t.Errorf("%s depends on forbidden package %s", pkg, dep)
				}
			}
		}
	}
}

// TestPackageDocs requires a package comment that says what the package
// owns and who may import it.
func TestPackageDocs(t *testing.T) {
	for _, pkg := range []string{"github.com/podhost/podhost/lifecycle", "github.com/podhost/podhost/lifecycle/lifecycletest"} {
		out, err := exec.Command("go", "list", "-f", "{{.Doc}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		doc := strings.TrimSpace(string(out))
		if doc == "" {
			t.Errorf("%s has no package doc", pkg)
		}
	}
}
