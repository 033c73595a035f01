package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/podvalidate"
)

// MaxFileSize bounds a manifest file; a larger one is an error.
const MaxFileSize = 1 << 20

var kinds = []string{"Pod", "PersistentVolume", "PersistentVolumeClaim", "ConfigMap", "Secret"}

// File is what one manifest file decoded to.
type File struct {
	Path string
	// Pods, Volumes and Claims carry their origin: source "file", key the
	// path, and "path: document N" for people.
	Pods    []sources.Pod
	Volumes []sources.Volume
	Claims  []sources.Claim
	// ConfigMaps and Secrets likewise.
	ConfigMaps []sources.ConfigMap
	Secrets    []sources.Secret
	// Errors are *DocumentError values, in document order.
	Errors []error
}

// Decode decodes the manifest file at path with content data for the node
// nodeName. seen is the time recorded in the config.seen annotation.
func Decode(path string, data []byte, nodeName string, seen time.Time) File {
	f := File{Path: path}
	if len(data) > MaxFileSize {
		f.Errors = append(f.Errors, &DocumentError{Path: path, Err: fmt.Errorf("file is larger than %d bytes", MaxFileSize)})
		return f
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return f
		}
		if err != nil {
			f.Errors = append(f.Errors, &DocumentError{Path: path, Document: n, Err: fmt.Errorf("reading document: %w", err)})
			return f
		}
		f.decodeDocument(n, doc, nodeName, seen)
	}
}

// decodeDocument decodes document n into f.
func (f *File) decodeDocument(n int, doc []byte, nodeName string, seen time.Time) {
	fail := func(err error) {
		f.Errors = append(f.Errors, &DocumentError{Path: f.Path, Document: n, Err: err})
	}
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		fail(fmt.Errorf("parsing: %w", err))
		return
	}
	t := bytes.TrimSpace(j)
	if len(t) == 0 || string(t) == "null" {
		return // an empty document, such as a trailing "---"
	}
	if t[0] != '{' {
		fail(errors.New("document is not an object"))
		return
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(j, &head); err != nil {
		fail(fmt.Errorf("reading apiVersion and kind: %w", err))
		return
	}
	switch {
	case head.APIVersion == "":
		fail(field.Required(field.NewPath("apiVersion"), ""))
		return
	case head.APIVersion != "v1":
		fail(field.NotSupported(field.NewPath("apiVersion"), head.APIVersion, []string{"v1"}))
		return
	case head.Kind == "":
		fail(field.Required(field.NewPath("kind"), ""))
		return
	}
	switch head.Kind {
	case "Pod":
		var pod v1.Pod
		if f.strict(n, head.Kind, j, &pod) {
			f.addPod(n, &pod, nodeName, seen)
		}
	case "PersistentVolume":
		decodeObject(f, n, head.Kind, j, nodeName, f.addVolume)
	case "PersistentVolumeClaim":
		decodeObject(f, n, head.Kind, j, nodeName, f.addClaim)
	case "ConfigMap":
		decodeObject(f, n, head.Kind, j, nodeName, f.addConfigMap)
	case "Secret":
		decodeObject(f, n, head.Kind, j, nodeName, f.addSecret)
	default:
		fail(field.NotSupported(field.NewPath("kind"), head.Kind, kinds))
	}
}

// decodeObject decodes document n, j, strictly as a T of kind and hands
// it to add.
func decodeObject[T any](f *File, n int, kind string, j []byte, nodeName string, add func(n int, obj *T, nodeName string)) {
	var obj T
	if f.strict(n, kind, j, &obj) {
		add(n, &obj, nodeName)
	}
}

// strict decodes j into obj, rejecting unknown and duplicate fields, and
// reports whether it succeeded.
func (f *File) strict(n int, kind string, j []byte, obj any) bool {
	strictErrs, err := sigsjson.UnmarshalStrict(j, obj, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		if p := badQuantity(j); p != "" {
			err = fmt.Errorf("%s: %w", p, err)
		}
		f.Errors = append(f.Errors, &DocumentError{Path: f.Path, Document: n, Kind: kind, Err: fmt.Errorf("decoding: %w", err)})
		return false
	}
	for _, e := range strictErrs {
		f.Errors = append(f.Errors, &DocumentError{Path: f.Path, Document: n, Kind: kind, Err: e})
	}
	return len(strictErrs) == 0
}

// fieldErrors records each validation error of document n on its own.
func (f *File) fieldErrors(n int, kind, namespace, name string, errs field.ErrorList) bool {
	for _, e := range errs {
		f.Errors = append(f.Errors, &DocumentError{Path: f.Path, Document: n, Kind: kind, Namespace: namespace, Name: name, Err: e})
	}
	return len(errs) > 0
}

func (f *File) addPod(n int, pod *v1.Pod, nodeName string, seen time.Time) {
	name := pod.Name
	uid := staticUID("Pod", nodeName, f.Path, pod)
	defaultPod(pod)
	makeStatic(pod, nodeName, uid, seen)
	if f.fieldErrors(n, "Pod", pod.Namespace, name, podvalidate.ValidatePod(pod, nil)) {
		return
	}
	f.Pods = append(f.Pods, sources.Pod{Pod: pod, Origin: f.origin(n)})
}

func (f *File) addVolume(n int, pv *v1.PersistentVolume, nodeName string) {
	pv.UID = staticUID("PersistentVolume", nodeName, f.Path, pv)
	defaultVolume(pv)
	if f.fieldErrors(n, "PersistentVolume", "", pv.Name, podvalidate.ValidateVolume(pv)) {
		return
	}
	f.Volumes = append(f.Volumes, sources.Volume{Volume: pv, Origin: f.origin(n)})
}

func (f *File) addClaim(n int, pvc *v1.PersistentVolumeClaim, nodeName string) {
	pvc.UID = staticUID("PersistentVolumeClaim", nodeName, f.Path, pvc)
	defaultClaim(pvc)
	if f.fieldErrors(n, "PersistentVolumeClaim", pvc.Namespace, pvc.Name, podvalidate.ValidateClaim(pvc)) {
		return
	}
	f.Claims = append(f.Claims, sources.Claim{Claim: pvc, Origin: f.origin(n)})
}

func (f *File) addConfigMap(n int, cm *v1.ConfigMap, nodeName string) {
	cm.UID = staticUID("ConfigMap", nodeName, f.Path, cm)
	if cm.Namespace == "" {
		cm.Namespace = "default"
	}
	if f.fieldErrors(n, "ConfigMap", cm.Namespace, cm.Name, podvalidate.ValidateConfigMap(cm)) {
		return
	}
	f.ConfigMaps = append(f.ConfigMaps, sources.ConfigMap{ConfigMap: cm, Origin: f.origin(n)})
}

func (f *File) addSecret(n int, s *v1.Secret, nodeName string) {
	defaultSecret(s)
	s.UID = staticUID("Secret", nodeName, f.Path, s)
	if f.fieldErrors(n, "Secret", s.Namespace, s.Name, podvalidate.ValidateSecret(s)) {
		return
	}
	f.Secrets = append(f.Secrets, sources.Secret{Secret: s, Origin: f.origin(n)})
}

func (f *File) origin(n int) sources.Origin {
	return sources.Origin{Source: sources.SourceFile, Key: f.Path, Where: fmt.Sprintf("%s: document %d", f.Path, n)}
}
