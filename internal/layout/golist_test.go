package layout

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// module is the import path of this repository's module.
const module = "github.com/podhost/podhost"

// root is the module's directory, seen from this package's.
const root = "../.."

// pkg is what the checks need of one package of the module.
type pkg struct {
	ImportPath   string
	Name         string
	Dir          string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// rel is p's path inside the module; ok is false for a path outside it.
func rel(p string) (string, bool) {
	if p == module {
		return ".", true
	}
	r, ok := strings.CutPrefix(p, module+"/")
	return r, ok
}

// listPackages reads every package of the module the way the go command
// does (go/build, with this machine's build constraints), skipping
// testdata, folders starting with "." or "_", and nested modules (tools/).
// It reads the files itself rather than running `go list`, so that the go
// command's test cache sees a change to any of them. It fails the test on
// a read error or when it finds suspiciously few packages, so that a
// broken walk cannot make the checks pass vacuously.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not %s: %v", root, err)
	}
	var pkgs []pkg
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if dir != root {
			name := d.Name()
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		bp, err := build.ImportDir(dir, 0)
		if _, none := errors.AsType[*build.NoGoError](err); none {
			return nil
		} else if err != nil {
			return err
		}
		r, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		path := module
		if r != "." {
			path += "/" + filepath.ToSlash(r)
		}
		pkgs = append(pkgs, pkg{
			ImportPath: path, Name: bp.Name, Dir: dir, GoFiles: bp.GoFiles,
			Imports: bp.Imports, TestImports: bp.TestImports, XTestImports: bp.XTestImports,
		})
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module's packages: %v", err)
	}
	if len(pkgs) < 30 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
	return pkgs
}
