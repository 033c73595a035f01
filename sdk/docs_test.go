package sdk

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"testing"
)

// TestPackageDocs checks that every package of the SDK, the examples and
// the plugins says in a doc comment what it is.
func TestPackageDocs(t *testing.T) {
	for _, root := range []string{".", "../examples", "../plugins"} {
		dirs := map[string]bool{} // dir → has a package doc
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(path) != ".go" || filepath.Base(path)[0] == '_' {
				return err
			}
			if matched, _ := filepath.Match("*_test.go", d.Name()); matched {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			dir := filepath.Dir(path)
			dirs[dir] = dirs[dir] || f.Doc != nil && len(f.Doc.Text()) > 0
			return nil
		})
		if err != nil {
			t.Fatalf("walking %s: %v", root, err)
		}
		for dir, documented := range dirs {
			if !documented {
				t.Errorf("package in %s has no doc comment", dir)
			}
		}
	}
}
