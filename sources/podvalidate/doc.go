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
// Volume sources podhost can serve are emptyDir, hostPath,
// persistentVolumeClaim and inline csi; every other source is rejected as
// unsupported rather than ignored, so a pod never starts without a volume it
// asked for.
package podvalidate
