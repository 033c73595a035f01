package config

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// FieldError is one problem with a host config.
type FieldError struct {
	// Path names the field, such as "plugins[0].path". It is empty only for
	// problems with the document as a whole (not YAML, empty, not a mapping)
	// and for top-level keys that are not field names.
	Path string
	// Line is the 1-based line in the source, or 0 if unknown.
	Line int
	// Message says what is wrong, in lower case.
	Message string
	// Err is the underlying error, if any (a stat error, for example).
	Err error
}

// Error formats the problem as "line N: path: message".
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// ValidationError holds every problem found in one host config, in the order
// of the document.
type ValidationError struct {
	// Source names the document, usually its file name.
	Source string
	Errors []*FieldError
}

// Error lists the problems one per line, each prefixed with the source:
//
//	host.yaml: line 7: plugins[0].pth: unknown field (did you mean "path"?)
func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, fe := range e.Errors {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.Source != "" {
			b.WriteString(e.Source)
			b.WriteString(": ")
		}
		b.WriteString(fe.Error())
	}
	return b.String()
}

// Unwrap returns the field errors, so errors.Is and errors.As see through
// to, for example, fs.ErrNotExist.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, len(e.Errors))
	for i, fe := range e.Errors {
		errs[i] = fe
	}
	return errs
}

// problems collects field errors. Once a path has an error, later errors on
// that path or below it are dropped, so that a value that failed to decode
// does not also show up as, say, missing.
type problems struct {
	errs []*FieldError
	bad  map[string]bool
}

func (p *problems) add(path string, line int, err error, format string, args ...any) {
	if p.covered(path) {
		return
	}
	if p.bad == nil {
		p.bad = make(map[string]bool)
	}
	p.bad[path] = true
	p.errs = append(p.errs, &FieldError{Path: path, Line: line, Message: fmt.Sprintf(format, args...), Err: err})
}

// suppress drops later errors on path and below, without reporting one.
func (p *problems) suppress(path string) {
	if p.bad == nil {
		p.bad = make(map[string]bool)
	}
	p.bad[path] = true
}

// covered reports whether path or one of its ancestors already has an error.
func (p *problems) covered(path string) bool {
	for q := path; ; q = parentPath(q) {
		if p.bad[q] {
			return true
		}
		if q == "" {
			return false
		}
	}
}

// err returns the collected problems as a *ValidationError, or nil.
func (p *problems) err(source string) error {
	if len(p.errs) == 0 {
		return nil
	}
	sort.SliceStable(p.errs, func(i, j int) bool { return lineKey(p.errs[i]) < lineKey(p.errs[j]) })
	return &ValidationError{Source: source, Errors: p.errs}
}

// lineKey orders errors by line, those without a line last.
func lineKey(e *FieldError) int {
	if e.Line <= 0 {
		return math.MaxInt
	}
	return e.Line
}

// parentPath returns the path of the field that contains path:
// "plugins[0].path" → "plugins[0]" → "plugins" → "".
func parentPath(path string) string {
	i := max(strings.LastIndexByte(path, '.'), strings.LastIndexByte(path, '['))
	if i < 0 {
		return ""
	}
	return path[:i]
}

// joinPath appends a field name to a path.
func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// indexPath appends a list index to a path.
func indexPath(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}
