package nodeserver

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	//lint:ignore SA1019 client-go's portforward and spdy dialers in v0.37 still take and return this package's Dialer
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	clientspdy "k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/util/exec"

	"github.com/podhost/podhost/host/streamproxy/streamproxytest"
)

// TestExecProxiedToTheRuntime runs a command through the node server to a
// CRI streaming server (the kubelet's library, as containerd serves it)
// with client-go's executors, SPDY and WebSocket v5 (translated on the
// node): stdin reaches the command, stdout and stderr come back apart,
// and so does the exit code.
func TestExecProxiedToTheRuntime(t *testing.T) {
	s, rc := startStreamingNode(t)

	u, _ := url.Parse(fmt.Sprintf("https://127.0.0.1:%d/exec/default/web/app?command=cat&input=1&output=1&error=1", s.Port()))
	spdy, err := remotecommand.NewSPDYExecutor(rc, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := remotecommand.NewWebSocketExecutor(rc, "GET", u.String())
	if err != nil {
		t.Fatal(err)
	}
	for name, ex := range map[string]remotecommand.Executor{"spdy": spdy, "websocket": ws} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := ex.StreamWithContext(t.Context(), remotecommand.StreamOptions{Stdin: strings.NewReader("in\n"), Stdout: &stdout, Stderr: &stderr})
			var code exec.CodeExitError
			if !errors.As(err, &code) || code.Code != 3 || stdout.String() != "in\n" || stderr.String() != "err\n" {
				t.Fatalf("stdout %q stderr %q, %v; want \"in\\n\" \"err\\n\" and exit code 3", stdout.String(), stderr.String(), err)
			}
		})
	}
}

// startStreamingNode serves a node whose streams go to a CRI streaming
// server with echoRuntime, and returns a client config with the API
// server's kind of client certificate.
func startStreamingNode(t *testing.T) (*Server, *rest.Config) {
	t.Helper()
	streams := streamproxytest.Start(t, &streamproxytest.EchoRuntime{})

	pki := newTestPKI(t)
	s, err := New(Options{Addr: "127.0.0.1:0", CertFile: pki.serverCert, KeyFile: pki.serverKey, ClientCAFile: pki.caFile,
		NodeName: "n1", Logs: (&fakeLogs{}).logs, Streams: streams})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	rc := &rest.Config{Host: "https://127.0.0.1", TLSClientConfig: rest.TLSClientConfig{CAData: pki.caPEM, CertData: pki.clientCertPEM, KeyData: pki.clientKeyPEM}}
	return s, rc
}

// TestPortForwardProxiedToTheRuntime forwards connections through the node
// to a CRI streaming server with client-go's port forwarder, over SPDY and
// over SPDY tunnelled in a WebSocket (kubectl's first choice), which the
// node unwraps: every connection reaches the runtime and its answer comes
// back.
func TestPortForwardProxiedToTheRuntime(t *testing.T) {
	s, rc := startStreamingNode(t)
	u, _ := url.Parse(fmt.Sprintf("https://127.0.0.1:%d/portForward/default/web", s.Port()))
	rt, upgrader, err := clientspdy.RoundTripperFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := portforward.NewSPDYOverWebsocketDialer(u, rc)
	if err != nil {
		t.Fatal(err)
	}
	dialers := map[string]httpstream.Dialer{
		"spdy":      clientspdy.NewDialer(upgrader, &http.Client{Transport: rt}, "POST", u),
		"websocket": ws,
	}
	for name, d := range dialers {
		t.Run(name, func(t *testing.T) {
			stop, ready := make(chan struct{}), make(chan struct{})
			fw, err := portforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{"0:80"}, stop, ready, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- fw.ForwardPorts() }()
			defer func() {
				close(stop)
				if err := <-done; err != nil {
					t.Errorf("ForwardPorts: %v", err)
				}
			}()
			select {
			case <-ready:
			case err := <-done:
				done <- err
				t.Fatalf("ForwardPorts ended before it was ready: %v", err)
			}
			ports, err := fw.GetPorts()
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0].Local))
				if err != nil {
					t.Fatal(err)
				}
				msg := fmt.Sprintf("connection %d", i)
				if _, err := io.WriteString(conn, msg); err != nil {
					t.Fatal(err)
				}
				conn.(*net.TCPConn).CloseWrite()
				got, err := io.ReadAll(conn)
				conn.Close()
				if err != nil || string(got) != strings.ToUpper(msg) {
					t.Fatalf("connection %d answered %q (%v); want %q", i, got, err, strings.ToUpper(msg))
				}
			}
		})
	}
}

// testPKI is a CA, a serving certificate for 127.0.0.1 and a client
// certificate, all signed by the CA.
type testPKI struct {
	caFile, serverCert, serverKey      string
	caPEM, clientCertPEM, clientKeyPEM []byte
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, []byte) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, _ := x509.MarshalECPrivateKey(key)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	p := testPKI{caFile: filepath.Join(dir, "ca.crt"), serverCert: filepath.Join(dir, "server.crt"), serverKey: filepath.Join(dir, "server.key")}
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	serverCert, serverKey := leaf(2, "node", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	p.clientCertPEM, p.clientKeyPEM = leaf(3, "kube-apiserver-kubelet-client", x509.ExtKeyUsageClientAuth, nil)
	for f, b := range map[string][]byte{p.caFile: p.caPEM, p.serverCert: serverCert, p.serverKey: serverKey} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}
