package manifest

import (
	"errors"
	"fmt"
)

// ErrNoObject reports a file in the manifest directory that yields nothing:
// it is empty, or holds only comments and document separators.
var ErrNoObject = errors.New("the file holds no object (it is empty or only comments)")

// DocumentError is a problem with one document of a manifest file, or with
// the whole file when Document is 0.
type DocumentError struct {
	Path     string
	Document int
	// Kind, Namespace and Name identify the object when the document
	// decoded far enough to tell; the name is the one written in the file.
	Kind, Namespace, Name string
	Err                   error
}

func (e *DocumentError) Error() string {
	if e.Document == 0 {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: document %d: %v", e.Path, e.Document, e.Err)
}

func (e *DocumentError) Unwrap() error { return e.Err }
