package manifest

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

var seen = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const webPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: nginx:1.27
`

// decoded renders a File as lines: "pod ns/name", "pv name", "pvc ns/name",
// "error <message>".
func decoded(f File) []string {
	var out []string
	for _, p := range f.Pods {
		out = append(out, "pod "+p.Pod.Namespace+"/"+p.Pod.Name+" at "+p.Origin.Where)
	}
	for _, pv := range f.Volumes {
		out = append(out, "pv "+pv.Volume.Name)
	}
	for _, pvc := range f.Claims {
		out = append(out, "pvc "+pvc.Claim.Namespace+"/"+pvc.Claim.Name)
	}
	for _, cm := range f.ConfigMaps {
		out = append(out, "configmap "+cm.ConfigMap.Namespace+"/"+cm.ConfigMap.Name)
	}
	for _, s := range f.Secrets {
		out = append(out, "secret "+s.Secret.Namespace+"/"+s.Secret.Name)
	}
	for _, e := range f.Errors {
		out = append(out, "error "+e.Error())
	}
	return out
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"one pod, name gets the node", webPod, []string{"pod default/web-node1 at pods/web.yaml: document 1"}},
		{"json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"prod"},"spec":{"containers":[{"name":"app","image":"x:1"}]}}`,
			[]string{"pod prod/web-node1 at pods/web.yaml: document 1"}},
		{"several documents, a leading separator opens none, a comment-only one counts", "---\n" + webPod + "---\n# only a comment\n---\n" + strings.Replace(webPod, "web", "api", 1) + "---\n",
			[]string{"pod default/web-node1 at pods/web.yaml: document 1", "pod default/api-node1 at pods/web.yaml: document 3"}},
		{"pv and pvc", "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\nspec: {capacity: {storage: 1Gi}, csi: {driver: d, volumeHandle: h}}\n---\n" +
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {volumeName: pv1}\n",
			[]string{"pv pv1", "pvc default/data"}},
		{"empty file", "", nil},
		{"bad document does not hide good ones", webPod + "---\n" + strings.Replace(webPod, "image: nginx:1.27", "image: ''", 1) + "---\n" + strings.Replace(webPod, "web", "api", 1),
			[]string{"pod default/web-node1 at pods/web.yaml: document 1", "pod default/api-node1 at pods/web.yaml: document 3",
				"error pods/web.yaml: document 2: spec.containers[0].image: Required value"}},
		{"unknown field", strings.Replace(webPod, "image:", "imagee:", 1),
			[]string{`error pods/web.yaml: document 1: unknown field "spec.containers[0].imagee"`}},
		{"duplicate field", strings.Replace(webPod, "  name: web\n", "  name: web\n  name: web2\n", 1),
			[]string{`error pods/web.yaml: document 1: parsing: yaml: unmarshal errors:` + "\n" + `  line 5: key "name" already set in map`}},
		{"wrong type names the field", webPod + "    ports: [{containerPort: http}]\n",
			[]string{"error pods/web.yaml: document 1: decoding: json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32"}},
		{"bad quantity names the field", webPod + "    resources: {limits: {cpu: lots}}\n",
			[]string{"error pods/web.yaml: document 1: decoding: spec.containers[0].resources.limits[cpu]: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"}},
		{"unsupported kind", "apiVersion: v1\nkind: Service\nmetadata: {name: c}\n",
			[]string{`error pods/web.yaml: document 1: kind: Unsupported value: "Service": supported values: "Pod", "PersistentVolume", "PersistentVolumeClaim", "ConfigMap", "Secret"`}},
		{"unsupported apiVersion", strings.Replace(webPod, "apiVersion: v1", "apiVersion: apps/v1", 1),
			[]string{`error pods/web.yaml: document 1: apiVersion: Unsupported value: "apps/v1": supported values: "v1"`}},
		{"missing kind", "apiVersion: v1\nmetadata: {name: c}\n", []string{"error pods/web.yaml: document 1: kind: Required value"}},
		{"missing apiVersion", "kind: Pod\n", []string{"error pods/web.yaml: document 1: apiVersion: Required value"}},
		{"not an object", "- a\n- b\n", []string{"error pods/web.yaml: document 1: document is not an object"}},
		{"not yaml", "a: [1\n", []string{"error pods/web.yaml: document 1: parsing: yaml: line 1: did not find expected ',' or ']'"}},
		{"configMap volume", webPod + "  volumes: [{name: c, configMap: {name: c}}]\n",
			[]string{"pod default/web-node1 at pods/web.yaml: document 1"}},
		{"configmap and secret", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n---\n" +
			"apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: prod}\nstringData: {password: hunter2}\n",
			[]string{"configmap default/cfg", "secret prod/s"}},
		{"a bad key names the field, a secret's value is never shown", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a/b: x}\n---\n" +
			"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {'a b': hunter2}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: t}\nsecretData: {}\n",
			[]string{`error pods/web.yaml: document 1: ConfigMap default/cfg: data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
				`error pods/web.yaml: document 2: Secret default/s: data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
				`error pods/web.yaml: document 3: unknown field "secretData"`}},
		{"static claim needs its volume", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n",
			[]string{"error pods/web.yaml: document 1: PersistentVolumeClaim default/data: spec.volumeName: Required value: a static claim names its volume"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decoded(Decode("pods/web.yaml", []byte(tt.data), "Node1", seen))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Decode:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestDecodeSecretStringData: stringData is folded into data (replacing
// its keys) and dropped, as the API server stores a Secret; type Opaque.
func TestDecodeSecretStringData(t *testing.T) {
	f := Decode("s.yaml", []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: eA==, b: eQ==}\nstringData: {b: z}\n"), "n", seen)
	if len(f.Errors) != 0 || len(f.Secrets) != 1 {
		t.Fatalf("Decode: secrets %d, errors %v", len(f.Secrets), f.Errors)
	}
	s := f.Secrets[0].Secret
	if string(s.Data["a"]) != "x" || string(s.Data["b"]) != "z" || s.StringData != nil || s.Type != v1.SecretTypeOpaque || s.UID == "" {
		t.Errorf("secret = data %q stringData %v type %q uid %q", s.Data, s.StringData, s.Type, s.UID)
	}
}

func TestDecodeTooLarge(t *testing.T) {
	f := Decode("big.yaml", make([]byte, MaxFileSize+1), "n", seen)
	var de *DocumentError
	if len(f.Errors) != 1 || !errors.As(f.Errors[0], &de) || de.Document != 0 {
		t.Fatalf("errors = %v, want one file-level DocumentError", f.Errors)
	}
}

func TestDecodeDefaultsAndStaticConventions(t *testing.T) {
	data := webPod + "  - name: side\n    image: busybox\n    ports: [{containerPort: 80}]\n  - name: pinned\n    image: reg:5000/x@sha256:abc\n  volumes: [{name: tmp}]\n"
	f := Decode("pods/web.yaml", []byte(data), "node1", seen)
	if len(f.Errors) != 0 || len(f.Pods) != 1 {
		t.Fatalf("Decode: pods %d, errors %v", len(f.Pods), f.Errors)
	}
	p := f.Pods[0].Pod
	tests := []struct {
		field     string
		got, want any
	}{
		{"namespace", p.Namespace, "default"},
		{"name", p.Name, "web-node1"},
		{"nodeName", p.Spec.NodeName, "node1"},
		{"restartPolicy", p.Spec.RestartPolicy, v1.RestartPolicyAlways},
		{"dnsPolicy", p.Spec.DNSPolicy, v1.DNSClusterFirst},
		{"terminationGracePeriodSeconds", *p.Spec.TerminationGracePeriodSeconds, int64(30)},
		{"pull policy of a tagged image", p.Spec.Containers[0].ImagePullPolicy, v1.PullIfNotPresent},
		{"pull policy of an untagged image", p.Spec.Containers[1].ImagePullPolicy, v1.PullAlways},
		{"pull policy of a digest", p.Spec.Containers[2].ImagePullPolicy, v1.PullIfNotPresent},
		{"port protocol", p.Spec.Containers[1].Ports[0].Protocol, v1.ProtocolTCP},
		{"volume without source", p.Spec.Volumes[0].EmptyDir != nil, true},
		{"config.source", p.Annotations[AnnotationSource], "file"},
		{"config.hash", p.Annotations[AnnotationHash], string(p.UID)},
		{"config.seen", p.Annotations[AnnotationSeen], "2026-01-02T03:04:05Z"},
		{"uid is UUID-shaped", len(p.UID) == 36 && strings.Count(string(p.UID), "-") == 4, true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.field, tt.got, tt.want)
		}
	}
}

func TestStaticUID(t *testing.T) {
	uid := func(path, data, node string) string {
		f := Decode(path, []byte(data), node, seen)
		if len(f.Pods) != 1 {
			t.Fatalf("Decode(%s): %v", path, f.Errors)
		}
		return string(f.Pods[0].Pod.UID)
	}
	base := uid("a.yaml", webPod, "n1")
	tests := []struct {
		name  string
		other string
		same  bool
	}{
		{"same content and path", uid("a.yaml", webPod, "n1"), true},
		{"comments and layout do not matter", uid("a.yaml", "# hi\n"+strings.Replace(webPod, "name: web", "name:   web", 1), "n1"), true},
		{"a uid in the manifest is ignored", uid("a.yaml", strings.Replace(webPod, "  name: web\n", "  name: web\n  uid: abc\n", 1), "n1"), true},
		{"seen time does not matter", string(Decode("a.yaml", []byte(webPod), "n1", seen.Add(time.Hour)).Pods[0].Pod.UID), true},
		{"edited content", uid("a.yaml", strings.Replace(webPod, "1.27", "1.28", 1), "n1"), false},
		{"other path", uid("b.yaml", webPod, "n1"), false},
		{"other node", uid("a.yaml", webPod, "n2"), false},
	}
	for _, tt := range tests {
		if (tt.other == base) != tt.same {
			t.Errorf("%s: uid %s vs %s, want same=%v", tt.name, tt.other, base, tt.same)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(webPod))
	f.Add([]byte(webPod + "---\n" + webPod + "  volumes: [{name: v, persistentVolumeClaim: {claimName: c}}]\n"))
	f.Add([]byte(`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"c"},"spec":{"resources":{"requests":{"storage":"x"}}}}`))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "fuzz/manifest.yaml"
		file := Decode(path, data, "node1", seen)
		for _, err := range file.Errors {
			if !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("error does not name the file: %v", err)
			}
		}
		for _, dp := range file.Pods {
			p := dp.Pod
			if p.UID == "" || !strings.HasSuffix(p.Name, "-node1") {
				t.Errorf("pod %s/%s uid %q: static conventions not applied", p.Namespace, p.Name, p.UID)
			}
		}
	})
}
