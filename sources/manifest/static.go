package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/sources"
)

// The annotations a static pod carries, as the kubelet names them.
const (
	AnnotationSource = "kubernetes.io/config.source"
	AnnotationHash   = "kubernetes.io/config.hash"
	AnnotationSeen   = "kubernetes.io/config.seen"
)

// staticUID hashes the node, the file path and the object as decoded (its
// own uid cleared) into a UUID-shaped UID.
func staticUID(kind, nodeName, path string, obj metav1.Object) types.UID {
	obj.SetUID("")
	content, _ := json.Marshal(obj) // typed API objects always marshal
	h := sha256.New()
	for _, part := range []string{kind, nodeName, path} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(content)
	s := hex.EncodeToString(h.Sum(nil)[:16])
	return types.UID(s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32])
}

// makeStatic applies the kubelet's static pod conventions.
func makeStatic(pod *v1.Pod, nodeName string, uid types.UID, seen time.Time) {
	pod.UID = uid
	if nodeName != "" {
		pod.Name = pod.Name + "-" + strings.ToLower(nodeName)
		pod.Spec.NodeName = nodeName
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[AnnotationSource] = sources.SourceFile
	pod.Annotations[AnnotationHash] = string(uid)
	pod.Annotations[AnnotationSeen] = seen.UTC().Format(time.RFC3339Nano)
}
