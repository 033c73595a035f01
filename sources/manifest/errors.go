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

// Error names the file and the document, and for an object that is not a
// pod (whose fields are unlike a pod's) its kind and name.
func (e *DocumentError) Error() string {
	if e.Document == 0 {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	if e.Kind != "" && e.Kind != "Pod" && e.Name != "" {
		return fmt.Sprintf("%s: document %d: %s %s: %v", e.Path, e.Document, e.Kind, objectName(e.Namespace, e.Name), e.Err)
	}
	return fmt.Sprintf("%s: document %d: %v", e.Path, e.Document, e.Err)
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Object is the kind, namespace and name of the document's object, as far
// as it decoded (sources.ObjectError).
func (e *DocumentError) Object() (kind, namespace, name string) { return e.Kind, e.Namespace, e.Name }

func (e *DocumentError) Unwrap() error { return e.Err }
