package node

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/sources/apisource"
)

// applyHandler is the local API's handler over a node that has only what
// POST /v1/pods needs: the API source and the event log.
func applyHandler(t testing.TB) http.Handler {
	t.Helper()
	n := &Node{log: hclog.NewNullLogger(), events: events.New(events.Options{})}
	n.api = apisource.New(apisource.Options{Persister: &apisource.MemoryPersister{}, NodeName: "node1"})
	if err := n.api.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	return localapi.Handler(localapi.Views{Pods: n.Pods()})
}

// postPod posts body to POST /v1/pods and returns the code and the answer.
func postPod(t testing.TB, h http.Handler, body []byte) (int, string) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/pods", strings.NewReader(string(body)))
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

const jsonPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"busybox:1"}]}}`

func TestApplyBodyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		code int
		want []string // substrings of the answer
	}{
		{"a pod is created", jsonPod, http.StatusCreated, []string{`"op": "created"`}},
		{"truncated json", jsonPod[:40], http.StatusBadRequest, []string{"parsing", "yaml"}},
		{"wrong json type names the field", strings.Replace(jsonPod, `"name":"web"`, `"name":5`, 1), http.StatusBadRequest,
			[]string{"decoding", "metadata.name", "number"}},
		{"random bytes", "\x00\xff\xfe garbage: [", http.StatusBadRequest, []string{"parsing"}},
		{"a json array", `[1, 2]`, http.StatusBadRequest, []string{"document is not an object"}},
		{"a json string", `"pod"`, http.StatusBadRequest, []string{"document is not an object"}},
		{"an invalid field stays 422", strings.Replace(jsonPod, `"image":"busybox:1"`, `"image":""`, 1), http.StatusUnprocessableEntity,
			[]string{`"field": "spec.containers[0].image"`}},
		{"an unknown field stays 422", strings.Replace(jsonPod, `"image":`, `"imagee":`, 1), http.StatusUnprocessableEntity,
			[]string{`"field": "spec.containers[0].imagee"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postPod(t, applyHandler(t), []byte(tc.body))
			if code != tc.code {
				t.Fatalf("POST /v1/pods = %d; want %d\n%s", code, tc.code, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("answer does not contain %q:\n%s", w, body)
				}
			}
		})
	}
}

// FuzzApplyBody checks that no request body is answered as a server error:
// whatever the bytes, the answer is a success, a 400 (it did not parse) or
// a 422 (it parsed but is not a valid pod), with an error that says why.
func FuzzApplyBody(f *testing.F) {
	for _, s := range []string{jsonPod, jsonPod[:40], `[1]`, `"x"`, "null", "", "---\n---\n", "\x00\xff",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: a, image: b}]}\n",
		strings.Replace(jsonPod, `"name":"web"`, `"name":{}`, 1), strings.Replace(jsonPod, `"containers":[`, `"containers":{`, 1)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		code, answer := postPod(t, applyHandler(t), body)
		switch code {
		case http.StatusOK, http.StatusCreated:
			return
		case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge:
			var eb localapi.ErrorBody
			if err := json.Unmarshal([]byte(answer), &eb); err != nil || eb.Error == "" {
				t.Fatalf("answer %d is not an error body naming the problem: %v\n%s", code, err, answer)
			}
		default:
			t.Fatalf("POST /v1/pods with %q = %d; want 2xx, 400 or 422\n%s", body, code, answer)
		}
	})
}
