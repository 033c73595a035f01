package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/test/crisetup"
)

// streamHost is a standalone host serving its local API on the unix
// socket and on TCP with a token, and the connection flags of each.
type streamHost struct {
	*podHost
	addr, tokenFile string
	conns           []streamConn
}

// streamConn is how the CLI reaches the host: the unix socket (SPDY, as
// client-go's WebSocket transport cannot dial a socket) or TCP with the
// token (WebSocket first, as kubectl).
type streamConn struct {
	name  string
	flags []string
}

func startStreamHost(t *testing.T) *streamHost {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeTCPAddress(t)
	h := startPodHostWith(t, fmt.Sprintf("api:\n  tcpAddress: %s\n  tokenFile: %s\n", addr, tokenFile), crisetup.WithPodNetwork())
	return &streamHost{podHost: h, addr: addr, tokenFile: tokenFile, conns: []streamConn{
		{"unix socket", []string{"--socket", filepath.Join(h.root, "host.sock")}},
		{"tcp", []string{"--server", "http://" + addr, "--token-file", tokenFile}},
	}}
}

// cli runs `podhost args... flags...` with stdin, and returns its stdout
// and stderr apart.
func (h *streamHost) cli(t *testing.T, stdin string, flags []string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, cliArgs(args, flags)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// cliArgs puts the connection flags before a "--", where cobra still
// reads them.
func cliArgs(args, flags []string) []string {
	for i, a := range args {
		if a == "--" {
			return append(append(append([]string{}, args[:i]...), flags...), args[i:]...)
		}
	}
	return append(append([]string{}, args...), flags...)
}

// startCLI starts a long-running CLI (attach, port-forward, exec) and
// returns its output lines and the process; it is killed when the test
// ends. Its stdin is a pipe that stays open until then.
func (h *streamHost) startCLI(t *testing.T, flags []string, args ...string) (<-chan string, *exec.Cmd) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	cmd := exec.CommandContext(ctx, h.bin, cliArgs(args, flags)...)
	in, keep, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = in
	lines := startLines(t, cmd, cancel)
	in.Close()
	t.Cleanup(func() { keep.Close() })
	return lines, cmd
}

// TestCLIStreams runs `podhost exec`, `attach`, `port-forward` and `top
// pods` against a standalone host, over the unix socket and over TCP with
// the token: the local API proxies the streams to containerd's streaming
// server as the Kubernetes-mode node does.
func TestCLIStreams(t *testing.T) {
	h := startStreamHost(t)
	h.apply(busyPod("shell", v1.RestartPolicyAlways,
		sh("app", `trap "exit 0" TERM; while true; do sleep 1; done`),
		sh("ticker", `trap "exit 0" TERM; i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done`)))
	web := busyPod("web", v1.RestartPolicyAlways,
		sh("web", `mkdir -p /www; echo "hello from the pod" > /www/index.html; exec httpd -f -p 8080 -h /www`))
	web.Spec.HostNetwork = false
	h.apply(web)
	h.waitPod("shell", 90*time.Second, "running", running)
	h.waitPod("web", 90*time.Second, "running", running)

	for _, conn := range h.conns {
		t.Run(conn.name, func(t *testing.T) {
			t.Run("exec", func(t *testing.T) {
				out, errOut, err := h.cli(t, "", conn.flags, "exec", "default/shell", "-c", "app", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
				if out != "out\n" || errOut != "err\n" || exitCode(err) != 3 {
					t.Fatalf("stdout %q stderr %q (%v); want out, err and exit code 3", out, errOut, err)
				}
				// Without -c: the pod's first container.
				out, errOut, err = h.cli(t, "", conn.flags, "exec", "default/shell", "--", "cat", "/proc/1/cmdline")
				if err != nil || !strings.Contains(out, "sleep 1") {
					t.Fatalf("exec without -c: %q %q (%v); want the app container's shell", out, errOut, err)
				}
			})
			t.Run("exec -i", func(t *testing.T) {
				out, errOut, err := h.cli(t, "line one\nline two\n", conn.flags, "exec", "-i", "default/shell", "-c", "app", "--", "sh", "-c", "wc -l; echo done")
				if err != nil || strings.TrimSpace(out) != "2\ndone" {
					t.Fatalf("stdout %q stderr %q (%v); want the two lines counted, then done", out, errOut, err)
				}
			})
			t.Run("exec -t", func(t *testing.T) {
				out, errOut, err := h.cli(t, "", conn.flags, "exec", "-t", "default/shell", "-c", "app", "--", "sh", "-c", "tty; echo err >&2")
				if err != nil || !regexp.MustCompile(`^/dev/pts/\d+\r\nerr\r\n$`).MatchString(out) || errOut != "" {
					t.Fatalf("stdout %q stderr %q (%v); want a terminal's name and err on it", out, errOut, err)
				}
				// On a terminal (script(1) gives one), -it puts it in raw
				// mode and sends its size; the command waits for a size as
				// the Kubernetes-mode test explains (CRI exec starts on 0x0).
				cmd := `sh -c 'i=0; while [ $i -lt 50 ]; do case $(stty size 2>/dev/null) in [1-9]*) break;; esac; i=$((i+1)); sleep 0.1; done; stty size'`
				line := "stty rows 33 cols 101; " + h.bin + " " + strings.Join(cliArgs([]string{"exec", "-it", "default/shell", "-c", "app", "--", cmd}, conn.flags), " ")
				if term := inTerminal(t, line); !strings.Contains(term, "33 101") {
					t.Fatalf("stty size in the container printed %q; want 33 101", term)
				}
			})
			t.Run("attach", func(t *testing.T) {
				lines, _ := h.startCLI(t, conn.flags, "attach", "default/shell", "-c", "ticker")
				first := waitLine(t, lines, regexp.MustCompile(`^tick \d+$`))
				second := waitLine(t, lines, regexp.MustCompile(`^tick \d+$`))
				if first == second {
					t.Fatalf("attach printed %q twice; want the container's new lines", first)
				}
			})
			t.Run("port-forward", func(t *testing.T) {
				lines, _ := h.startCLI(t, conn.flags, "port-forward", "default/web", ":8080")
				getThroughForward(t, lines)
			})
		})
	}

	t.Run("top pods", func(t *testing.T) {
		// The CPU rate needs two readings, 10 s apart.
		var last string
		poll(t, 90*time.Second, func() bool {
			out, _, err := h.cli(t, "", h.conns[0].flags, "top", "pods", "-o", "json")
			last = out
			var pods []statsapi.PodStats
			if err != nil || json.Unmarshal([]byte(out), &pods) != nil {
				return false
			}
			for _, p := range pods {
				if p.PodRef.Name == "shell" && p.CPU != nil && p.CPU.UsageNanoCores != nil && *p.CPU.UsageNanoCores > 0 &&
					p.Memory != nil && p.Memory.WorkingSetBytes != nil && *p.Memory.WorkingSetBytes > 0 {
					return true
				}
			}
			return false
		}, func() string { return "top pods -o json: " + last })
		out, errOut, err := h.cli(t, "", h.conns[1].flags, "top", "pods")
		if err != nil || !regexp.MustCompile(`(?m)^default/shell\s+[1-9]\d*m\s+[1-9]\d*Mi$`).MatchString(out) {
			t.Fatalf("top pods: %q %q (%v); want default/shell with non-zero CPU and memory", out, errOut, err)
		}
		out, errOut, err = h.cli(t, "", h.conns[0].flags, "top", "node")
		if err != nil || !regexp.MustCompile(`(?m)^\S+\s+[1-9]\d*m\s+[1-9]\d*Mi$`).MatchString(out) {
			t.Fatalf("top node: %q %q (%v); want non-zero CPU and memory", out, errOut, err)
		}
	})

	t.Run("missing pod or container", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"exec", "default/nope", "--", "true"}, "pod default/nope"},
			{[]string{"exec", "default/shell", "-c", "nope", "--", "true"}, `container "nope" in pod default/shell`},
			{[]string{"attach", "default/shell", "-c", "nope"}, `container "nope" in pod default/shell`},
		} {
			for _, conn := range h.conns {
				out, errOut, err := h.cli(t, "", conn.flags, tc.args...)
				if exitCode(err) != 1 || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "not found") {
					t.Errorf("%s over %s: %q %q (%v); want exit status 1 and not found naming %s", strings.Join(tc.args, " "), conn.name, out, errOut, err, tc.want)
				}
			}
		}
		for _, path := range []string{"/v1/pods/default/nope/exec?container=app&command=true&output=1", "/v1/pods/default/nope/portforward"} {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+h.addr+path, nil)
			req.Header.Set("Authorization", "Bearer e2e-s3cret")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "pod default/nope") {
				t.Errorf("POST %s: %d %q; want 404 naming pod default/nope", path, resp.StatusCode, b)
			}
		}
	})

	t.Run("command that does not exist", func(t *testing.T) {
		out, errOut, err := h.cli(t, "", h.conns[0].flags, "exec", "default/shell", "-c", "app", "--", "/no/such/command")
		t.Logf("exec of a missing command: stdout %q stderr %q exit %d", out, errOut, exitCode(err))
		if code := exitCode(err); code == 0 || code == -1 || !strings.Contains(errOut, "/no/such/command") {
			t.Fatalf("stdout %q stderr %q (%v); want the runtime's error naming the command, and its exit code", out, errOut, err)
		}
	})

	// A dropped stream ends the exec'd process's stdin, so a process
	// reading it ends. (One that only writes keeps running: containerd
	// 1.6's streaming server runs a CRI exec on a context the connection
	// does not end and keeps its output pipes open, and the runtime
	// contract has no call to kill an exec; see docs/operations.md.)
	t.Run("dropped stream ends a reader", func(t *testing.T) {
		const marker = "podhost-dropped-reader"
		lines, cmd := h.startCLI(t, h.conns[0].flags, "exec", "-i", "default/shell", "-c", "app", "--", "sh", "-c", "echo started; cat; : "+marker)
		waitLine(t, lines, regexp.MustCompile(`^started$`))
		if n := h.processesMatching(t, marker); n == 0 {
			t.Fatalf("the exec'd process with %s is not in the container's ps", marker)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		var n int
		poll(t, 60*time.Second, func() bool {
			n = h.processesMatching(t, marker)
			return n == 0
		}, func() string {
			return fmt.Sprintf("%d processes with %s left in the container after the client was killed", n, marker)
		})
	})

	// The stream goes from the host to containerd's streaming server, not
	// through the plugin: an exec keeps running while the plugin is killed
	// and restarted, and ends with its output and exit code; the pod is
	// untouched.
	t.Run("runtime plugin killed mid-exec", func(t *testing.T) {
		before, _ := h.get("shell")
		plugin := h.waitPlugin(func(p localapi.PluginInfo) bool { return p.Ready && p.PID != 0 })
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, h.bin, cliArgs([]string{"exec", "default/shell", "-c", "app", "--", "sh", "-c",
			"echo started; while [ ! -e /tmp/go-on ]; do sleep 0.1; done; echo finished; exit 7"}, h.conns[0].flags)...)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(stdout)
		if l, err := rd.ReadString('\n'); l != "started\n" {
			t.Fatalf("exec printed %q (%v); want started", l, err)
		}
		if err := syscall.Kill(plugin.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		h.waitPlugin(func(p localapi.PluginInfo) bool {
			return p.Ready && p.Restarts > plugin.Restarts && p.PID != plugin.PID
		})
		if _, errOut, err := h.cli(t, "", h.conns[0].flags, "exec", "default/shell", "-c", "app", "--", "touch", "/tmp/go-on"); err != nil {
			t.Fatalf("exec after the plugin restarted: %v: %s", err, errOut)
		}
		rest, _ := io.ReadAll(rd)
		err = cmd.Wait()
		if string(rest) != "finished\n" || exitCode(err) != 7 {
			t.Fatalf("the exec across the plugin's restart printed %q, stderr %q (%v); want finished and exit code 7", rest, errOut.String(), err)
		}
		after, _ := h.get("shell")
		for _, c := range []string{"app", "ticker"} {
			b, a := containerStatus(before, c), containerStatus(after, c)
			if a == nil || a.State.Running == nil || a.ContainerID != b.ContainerID || a.RestartCount != b.RestartCount {
				t.Errorf("container %s after the plugin's restart: %+v; want it running as before (%s, %d restarts)", c, a, b.ContainerID, b.RestartCount)
			}
		}
	})

	t.Run("TCP requires the token", func(t *testing.T) {
		for _, path := range []string{
			"/v1/pods/default/shell/exec?container=app&command=echo&command=SHELL&output=1",
			"/v1/pods/default/web/portforward",
		} {
			for _, auth := range []string{"", "Bearer nope"} {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+h.addr+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Connection", "Upgrade")
				req.Header.Set("Upgrade", "SPDY/3.1")
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "SHELL") {
					t.Errorf("POST %s with %q: %d %q; want 401", path, auth, resp.StatusCode, b)
				}
			}
		}
		wrong := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(wrong, []byte("nope\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := h.cli(t, "", []string{"--server", "http://" + h.addr, "--token-file", wrong}, "exec", "default/shell", "--", "echo", "SHELL")
		if err == nil || strings.Contains(out, "SHELL") || !strings.Contains(errOut, "nauthorized") {
			t.Errorf("exec with a wrong token: %q %q (%v); want refused as unauthorized", out, errOut, err)
		}
	})
}

// inTerminal runs a shell line under script(1), which gives it a
// terminal, and returns what the terminal showed.
func inTerminal(t *testing.T, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "script", "-qec", line, "/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// processesMatching counts the processes of the shell pod's app container
// whose command line holds marker, by `ps` through another exec.
func (h *streamHost) processesMatching(t *testing.T, marker string) int {
	t.Helper()
	out, errOut, err := h.cli(t, "", h.conns[0].flags, "exec", "default/shell", "-c", "app", "--", "ps", "-o", "pid,args")
	if err != nil {
		t.Fatalf("ps in the container: %v: %s", err, errOut)
	}
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, marker) && !strings.Contains(l, " ps ") {
			n++
		}
	}
	return n
}
