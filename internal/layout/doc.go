// Package layout holds the repository-wide checks that keep the house as
// README's layout table draws it: every package has a doc comment, no
// package imports one above it, and the packages made for tests are
// imported only by tests. Its tests read `go list -json` of every package
// of the module; the rules are the tables in layout_test.go.
//
// It has no code besides this comment, and nothing imports it.
package layout
