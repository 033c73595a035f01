package layout

import (
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docProblems checks the package doc of one package, given the doc comment
// of each of its non-test files that has one (file name → text). The doc
// sits in exactly one file; a library's starts "Package <name> " and says
// who imports it; a command's starts "Command ".
func docProblems(path, name string, docs map[string]string) []string {
	if len(docs) == 0 {
		return []string{fmt.Sprintf("%s has no package doc: say what it owns and who may import it", path)}
	}
	if len(docs) > 1 {
		files := make([]string, 0, len(docs))
		for f := range docs {
			files = append(files, f)
		}
		slices.Sort(files)
		return []string{fmt.Sprintf("%s has package docs in %s: keep one (doc.go)", path, strings.Join(files, ", "))}
	}
	var doc string
	for _, d := range docs {
		doc = d
	}
	var problems []string
	if name == "main" {
		if !strings.HasPrefix(doc, "Command ") {
			problems = append(problems, fmt.Sprintf("%s is a command; its doc should start \"Command \"", path))
		}
		return problems
	}
	if !strings.HasPrefix(doc, "Package "+name+" ") {
		problems = append(problems, fmt.Sprintf("%s: the doc should start \"Package %s \"", path, name))
	}
	if !strings.Contains(doc, "import") {
		problems = append(problems, fmt.Sprintf("%s: the doc should say who imports the package (or that nothing does)", path))
	}
	return problems
}

// TestEveryPackageHasADoc checks the package doc of every package of the
// module, generated ones included (their doc.go is written by hand).
func TestEveryPackageHasADoc(t *testing.T) {
	for _, p := range listPackages(t) {
		docs := map[string]string{}
		for _, f := range p.GoFiles {
			af, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc != nil {
				docs[f] = af.Doc.Text()
			}
		}
		path, _ := rel(p.ImportPath)
		for _, problem := range docProblems(path, p.Name, docs) {
			t.Error(problem)
		}
	}
}

func TestDocRules(t *testing.T) {
	tests := []struct {
		name, pkgName string
		docs          map[string]string
		want          string // substring of the one problem; empty for none
	}{
		{"library", "state", map[string]string{"doc.go": "Package state owns the database.\n\nOnly host/node imports it.\n"}, ""},
		{"command", "main", map[string]string{"main.go": "Command podhost is the node agent.\n"}, ""},
		{"no doc", "state", nil, "has no package doc"},
		{"two docs", "state", map[string]string{"a.go": "Package state imports.\n", "b.go": "Package state imports.\n"}, "a.go, b.go"},
		{"wrong name", "state", map[string]string{"doc.go": "Package store owns it; nothing imports it.\n"}, `start "Package state "`},
		{"no importers", "state", map[string]string{"doc.go": "Package state owns the database.\n"}, "who imports"},
		{"command as package", "main", map[string]string{"main.go": "Package main runs.\n"}, `start "Command "`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := docProblems("x", tt.pkgName, tt.docs)
			switch {
			case tt.want == "" && len(got) != 0:
				t.Errorf("problems %q, want none", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Errorf("problems %q, want one containing %q", got, tt.want)
			}
		})
	}
}
