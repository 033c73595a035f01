package lifecycle_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// scenarioIDs are the 70 behaviour scenarios of docs/lifecycle.md, section
// 10: groups A to G, numbered 1 to 70.
var scenarioIDs = func() []string {
	groups := []struct {
		letter   string
		from, to int
	}{{"A", 1, 22}, {"B", 23, 25}, {"C", 26, 33}, {"D", 34, 39}, {"E", 40, 54}, {"F", 55, 67}, {"G", 68, 70}}
	var ids []string
	for _, g := range groups {
		for n := g.from; n <= g.to; n++ {
			ids = append(ids, fmt.Sprintf("%s%d", g.letter, n))
		}
	}
	return ids
}()

// TestScenarioCoverage checks that every scenario names something that
// runs: a section of a transcript under testdata (a comment followed by
// commands; TestTranscripts replays every file), or the name of a subtest
// of a Test function, given to t.Run as a literal or as a field of the
// table the test ranges over. An ID that only appears in a comment does
// not count.
func TestScenarioCoverage(t *testing.T) {
	if len(scenarioIDs) != 70 {
		t.Fatalf("%d scenario IDs; want 70", len(scenarioIDs))
	}
	names, err := subtestNames("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	sections, err := transcriptSections("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	corpus := strings.Join(append(names, sections...), "\n")
	for _, id := range scenarioIDs {
		if !mentions(corpus, id) {
			t.Errorf("scenario %s names no transcript section and no subtest that runs", id)
		}
	}
}

func mentions(text, id string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9])` + id + `([^0-9]|$)`).MatchString(text)
}

// transcriptSections returns the comment of every transcript section that
// is followed by at least one command.
func transcriptSections(pattern string) ([]string, error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		lines, err := lifecycletest.ReadLines(f)
		if err != nil {
			return nil, err
		}
		var comment []string
		for _, l := range lines {
			l = strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(l, "#"):
				comment = append(comment, l)
			case l == "" || l == "----":
			case len(comment) > 0:
				out = append(out, strings.Join(comment, " "))
				comment = nil
			}
		}
	}
	return out, nil
}

// subtestNames returns the names given to t.Run inside Test functions: a
// string literal (the literal prefix of a concatenation), or the string
// values of the field f when the call is t.Run(v.f, …) inside a range over
// a composite literal table, or over a variable holding one.
func subtestNames(pattern string) ([]string, error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []string
	for _, f := range files {
		if f == "scenarios_test.go" {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return nil, err
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			out = append(out, namesInTest(fn.Body)...)
		}
	}
	return out, nil
}

func namesInTest(body *ast.BlockStmt) []string {
	tables := map[string]*ast.CompositeLit{} // variable -> table literal
	var out []string
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				id, ok := lhs.(*ast.Ident)
				if ok && i < len(n.Rhs) {
					if lit, ok := n.Rhs[i].(*ast.CompositeLit); ok {
						tables[id.Name] = lit
					}
				}
			}
		case *ast.CallExpr:
			if name, ok := literalRunName(n); ok {
				out = append(out, name)
			}
		case *ast.RangeStmt:
			out = append(out, tableRunNames(n, tables)...)
		}
		return true
	})
	return out
}

// runArg returns the first argument of a t.Run call.
func runArg(call *ast.CallExpr) (ast.Expr, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Run" || len(call.Args) != 2 {
		return nil, false
	}
	if _, ok := call.Args[1].(*ast.FuncLit); !ok {
		return nil, false
	}
	return call.Args[0], true
}

func literalRunName(call *ast.CallExpr) (string, bool) {
	arg, ok := runArg(call)
	if !ok {
		return "", false
	}
	for {
		bin, ok := arg.(*ast.BinaryExpr)
		if !ok {
			break
		}
		arg = bin.X
	}
	return stringLit(arg)
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// tableRunNames returns the names of the cases of a table range whose body
// calls t.Run(v.field, …).
func tableRunNames(r *ast.RangeStmt, tables map[string]*ast.CompositeLit) []string {
	v, ok := r.Value.(*ast.Ident)
	if !ok {
		return nil
	}
	table, ok := r.X.(*ast.CompositeLit)
	if id, isIdent := r.X.(*ast.Ident); isIdent {
		table, ok = tables[id.Name]
	}
	if !ok {
		return nil
	}
	field := ""
	ast.Inspect(r.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && field == "" {
			if arg, ok := runArg(call); ok {
				if sel, ok := arg.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == v.Name {
						field = sel.Sel.Name
					}
				}
			}
		}
		return field == ""
	})
	if field == "" {
		return nil
	}
	position := -1 // index of field in an inline struct type, for unkeyed cases
	if at, ok := table.Type.(*ast.ArrayType); ok {
		if st, ok := at.Elt.(*ast.StructType); ok {
			i := 0
			for _, f := range st.Fields.List {
				for _, n := range f.Names {
					if n.Name == field {
						position = i
					}
					i++
				}
			}
		}
	}
	var out []string
	for _, elt := range table.Elts {
		c, ok := elt.(*ast.CompositeLit)
		if !ok {
			continue
		}
		for i, e := range c.Elts {
			var val ast.Expr
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == field {
					val = kv.Value
				}
			} else if i == position {
				val = e
			}
			if s, ok := stringLit(val); ok && val != nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestSubtestNamesFindsOnlyWhatRuns checks the coverage rule on small
// sources: comments and error messages do not count, subtest names do.
func TestSubtestNamesFindsOnlyWhatRuns(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"a comment is not a case", `// A1: covered?
	t.Errorf("A1 failed")`, nil},
		{"a literal subtest", `t.Run("A1 starts", func(t *testing.T) {})`, []string{"A1 starts"}},
		{"a concatenated subtest name", `t.Run("E53 pass of "+d.String(), func(t *testing.T) {})`, []string{"E53 pass of "}},
		{"a keyed table", `for _, tc := range []struct{ name string }{{name: "B23 x"}} {
		t.Run(tc.name, func(t *testing.T) {})
	}`, []string{"B23 x"}},
		{"an unkeyed table held in a variable", `tests := []struct{ n int; name string }{{1, "C26 y"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {})
	}`, []string{"C26 y"}},
		{"a table not run as subtests", `for _, tc := range []struct{ name string }{{name: "D34 z"}} {
		_ = tc
	}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\nimport \"testing\"\nfunc TestX(t *testing.T) {\n\t" + tc.body + "\n}\n"
			f, err := parser.ParseFile(token.NewFileSet(), "x_test.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := namesInTest(f.Decls[1].(*ast.FuncDecl).Body)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("names %q; want %q", got, tc.want)
			}
		})
	}
}
