// Package podvalidate owns the rules a pod manifest must satisfy before
// podhost will run it, whatever source it came from (manifest directory,
// local API, API server). It checks an already decoded and defaulted
// k8s.io/api/core/v1 Pod and returns every problem as a field.Error whose
// path names the offending field, such as spec.containers[1].name.
//
// It owns validation only: decoding, defaulting (namespace "default",
// restartPolicy Always, …) and conflict handling belong to the sources that
// call it. Anything may import it; it imports only k8s.io types and
// apimachinery's validation helpers.
//
// Every field of the pod is honoured or refused (Rules, fields.go; the table
// docs/pod-fields.md is generated from it and checked by
// TestFieldTableIsComplete, which walks the k8s.io/api types by reflection
// and fails on a field in neither class). A refused field that is set is a
// Forbidden error naming it, found by walking the pod against Rules, so
// nothing is accepted and then dropped; partial.go refuses the values of
// honoured fields that podhost does not honour.
//
// Volume sources podhost can serve are emptyDir, hostPath,
// persistentVolumeClaim, inline csi, downwardAPI, configMap, secret and
// projected (its serviceAccountToken sources for pods of the API server
// only); every other source is refused rather
// than ignored, so a pod never starts without a volume it asked for. The
// downward API's selectors, modes and the file paths of every item are
// checked as the API server checks them (downward.go): a path may not be
// absolute nor have a ".." element.
package podvalidate
