package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/test/crisetup"
)

// The two protocols kubectl speaks to the API server, which passes them
// on to the node (podhost declares ExtendWebSocketsToKubelet): WebSocket
// v5 first, SPDY when the WebSocket gate is off.
var streamProtocols = []struct {
	name string
	env  []string
}{
	{"websocket", nil},
	{"spdy", []string{"KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false", "KUBECTL_PORT_FORWARD_WEBSOCKETS=false"}},
}

// TestKubeStreams runs kubectl exec, cp, attach and port-forward against a
// podhost node through a real API server, each over WebSocket and over
// SPDY: the node proxies them to containerd's streaming server.
func TestKubeStreams(t *testing.T) {
	k := startKubeHostVia(t, "", nil, crisetup.WithPodNetwork())
	shell := kubePod("shell", v1.RestartPolicyAlways,
		sh("app", `trap "exit 0" TERM; while true; do sleep 1; done`),
		sh("ticker", `trap "exit 0" TERM; i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done`))
	k.create(shell)
	web := kubePod("web", v1.RestartPolicyAlways,
		sh("web", `mkdir -p /www; echo "hello from the pod" > /www/index.html; exec httpd -f -p 8080 -h /www`))
	web.Spec.HostNetwork = false
	k.create(web)
	k.waitAPIRunning("shell", 90*time.Second)
	k.waitAPIRunning("web", 90*time.Second)
	// The API server passes WebSockets through to a node that declares it
	// translates them itself; otherwise it would translate them.
	node, err := k.cluster.Client.CoreV1().Nodes().Get(t.Context(), kubeNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(node.Status.DeclaredFeatures, "ExtendWebSocketsToKubelet") {
		t.Fatalf("the node declares %v; want ExtendWebSocketsToKubelet", node.Status.DeclaredFeatures)
	}

	for _, proto := range streamProtocols {
		t.Run(proto.name, func(t *testing.T) {
			t.Run("exec", func(t *testing.T) {
				out, errOut, err := k.kubectl(t, "", proto.env, "exec", "shell", "-c", "app", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
				if out != "out\n" || !strings.Contains(errOut, "err\n") || !strings.Contains(errOut, "command terminated with exit code 3") || exitCode(err) != 3 {
					t.Fatalf("stdout %q stderr %q (%v); want out, err and exit code 3", out, errOut, err)
				}
			})
			t.Run("exec -i", func(t *testing.T) {
				out, errOut, err := k.kubectl(t, "line one\nline two\n", proto.env, "exec", "-i", "shell", "-c", "app", "--", "sh", "-c", "wc -l; echo done")
				if err != nil || strings.TrimSpace(out) != "2\ndone" {
					t.Fatalf("stdout %q stderr %q (%v); want the two lines counted, then done", out, errOut, err)
				}
			})
			t.Run("exec -t", func(t *testing.T) {
				// script gives kubectl a terminal; its size is set first and
				// must be what the command in the container reads. kubectl
				// sends that size first on the resize stream, but containerd's
				// CRI exec starts the process on a terminal of 0x0 and applies
				// the sizes only after (as for the kubelet: CRI's ExecRequest
				// carries no size), so a command reading it at once may see
				// none; busybox's stty then prints "stty: standard input".
				// The command waits up to 5 s for a size, then reads it.
				kubectl := `exec -it shell -c app -- sh -c 'i=0; while [ $i -lt 50 ]; do ` +
					`case $(stty size 2>/dev/null) in [1-9]*) break;; esac; i=$((i+1)); sleep 0.1; done; stty size'`
				out := k.inTerminal(t, proto.env, "stty rows 33 cols 101; "+k.kubectlLine()+" "+kubectl)
				if !strings.Contains(out, "33 101") {
					t.Fatalf("stty size in the container printed %q; want 33 101", out)
				}
			})
			t.Run("cp", func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(dir, "in.txt")
				body := strings.Repeat("podhost copies this both ways\n", 1000)
				if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				remote := "/tmp/copied-" + proto.name + ".txt"
				if out, errOut, err := k.kubectl(t, "", proto.env, "cp", src, "shell:"+remote, "-c", "app"); err != nil {
					t.Fatalf("kubectl cp to the pod: %v\n%s%s", err, out, errOut)
				}
				if out, _, err := k.kubectl(t, "", proto.env, "exec", "shell", "-c", "app", "--", "wc", "-c", remote); err != nil || !strings.HasPrefix(out, fmt.Sprint(len(body))) {
					t.Fatalf("the copied file in the pod: %q (%v); want %d bytes", out, err, len(body))
				}
				back := filepath.Join(dir, "back.txt")
				if out, errOut, err := k.kubectl(t, "", proto.env, "cp", "shell:"+remote, back, "-c", "app"); err != nil {
					t.Fatalf("kubectl cp from the pod: %v\n%s%s", err, out, errOut)
				}
				if got, err := os.ReadFile(back); err != nil || string(got) != body {
					t.Fatalf("copied back %d bytes (%v); want the %d bytes sent", len(got), err, len(body))
				}
			})
			t.Run("attach", func(t *testing.T) {
				lines := k.startKubectl(t, proto.env, "attach", "shell", "-c", "ticker")
				first := waitLine(t, lines, regexp.MustCompile(`^tick \d+$`))
				second := waitLine(t, lines, regexp.MustCompile(`^tick \d+$`))
				if first == second {
					t.Fatalf("attach printed %q twice; want the container's new lines", first)
				}
			})
			t.Run("port-forward", func(t *testing.T) {
				lines := k.startKubectl(t, proto.env, "port-forward", "pod/web", ":8080")
				getThroughForward(t, lines)
			})
		})
	}

	// The node itself, asked as the API server asks it: a missing pod or
	// container is a 404 naming it.
	client := k.nodeClient(t)
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	for _, tt := range []struct{ path, want string }{
		{"/exec/default/nope/app?command=true&output=1", "pod default/nope"},
		{"/exec/default/shell/nope?command=true&output=1", `container "nope" in pod default/shell`},
		{"/attach/default/shell/nope?output=1", `container "nope" in pod default/shell`},
		{"/portForward/default/nope", "pod default/nope"},
	} {
		resp, err := client.Post(fmt.Sprintf("https://127.0.0.1:%d%s", port, tt.path), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), tt.want) {
			t.Errorf("POST %s: %d %q; want 404 naming %s", tt.path, resp.StatusCode, b, tt.want)
		}
	}
}

// kubectl runs kubectl with stdin and extra environment, and returns its
// stdout and stderr apart.
func (k *kubeHost) kubectl(t *testing.T, stdin string, env []string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := k.cluster.KubectlCmd(ctx, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// kubectlLine is the shell words that run kubectl with the admin
// kubeconfig.
func (k *kubeHost) kubectlLine() string {
	cmd := k.cluster.KubectlCmd(context.Background())
	return strings.Join(cmd.Args, " ")
}

// inTerminal runs a shell line under script(1), which gives it a
// terminal, and returns what the terminal showed.
func (k *kubeHost) inTerminal(t *testing.T, env []string, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "script", "-qec", line, "/dev/null")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// startKubectl starts a long-running kubectl (attach, port-forward) and
// returns its output lines; it is killed when the test ends.
func (k *kubeHost) startKubectl(t *testing.T, env []string, args ...string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	cmd := k.cluster.KubectlCmd(ctx, args...)
	cmd.Env = append(os.Environ(), env...)
	return startLines(t, cmd, cancel)
}

// startLines starts cmd, made with a context that cancel ends, and returns
// its output lines (stdout and stderr); when the test ends, cancel kills
// it and its output is drained.
func startLines(t *testing.T, cmd *exec.Cmd, cancel context.CancelFunc) <-chan string {
	t.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- strings.TrimRight(sc.Text(), "\r"):
			default:
			}
		}
		close(lines)
	}()
	go func() { _ = cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return lines
}

// waitLine returns the first line that matches re, failing the test if
// the output ends or a minute passes first.
func waitLine(t *testing.T, lines <-chan string, re *regexp.Regexp) string {
	t.Helper()
	var seen []string
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended without a line matching %s:\n%s", re, strings.Join(seen, "\n"))
			}
			if re.MatchString(l) {
				return l
			}
			seen = append(seen, l)
		case <-timeout:
			t.Fatalf("no line matching %s within a minute:\n%s", re, strings.Join(seen, "\n"))
		}
	}
}

// getThroughForward reads the local port from port-forward's output
// lines and fetches the web pod's page through it three times (a
// connection, and a stream pair, each).
func getThroughForward(t *testing.T, lines <-chan string) {
	t.Helper()
	m := waitLine(t, lines, regexp.MustCompile(`^Forwarding from 127\.0\.0\.1:(\d+) -> 8080$`))
	port := regexp.MustCompile(`:(\d+) `).FindStringSubmatch(m)[1]
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for range 3 {
		resp, err := client.Get("http://127.0.0.1:" + port + "/index.html")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "hello from the pod\n" {
			t.Fatalf("GET through port-forward: %d %q; want the pod's page", resp.StatusCode, b)
		}
	}
}

// exitCode is a finished command's exit code, -1 when it did not run.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// nodeClient is an HTTPS client of the node's daemon endpoint with the API
// server's kubelet-client certificate.
func (k *kubeHost) nodeClient(t *testing.T) *http.Client {
	t.Helper()
	ca, err := os.ReadFile(k.cluster.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(k.cluster.KubeletClientCertFile, k.cluster.KubeletClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}}
}
