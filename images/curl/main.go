// Command curl is the small part of curl that the upstream e2e suite uses
// in the agnhost image (`curl http://IP:8080/echo?msg=…` in exec lifecycle
// hooks, `curl -g -q -s 'http://IP:9080/dial?…'` in the network checks): a
// GET of one URL whose body goes to standard output, with curl's -s, -S,
// -g, -q, -f, -k, -L, -i, -o FILE, -w '%{http_code}', -m/--max-time and
// --connect-timeout, and curl's exit codes: 0 for any HTTP answer (22 with
// -f for a status of 400 or more), 7 when it cannot connect, 28 on a
// timeout, 3 for a bad URL, 2 for a bad option. The conformance
// harness builds it static (CGO_ENABLED=0) into the agnhost image as
// /usr/bin/curl (test/conformance), because the image is built on busybox,
// which has no curl; it is no general curl and not for anything else.
package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	var fail, insecure, follow, headers bool
	var out, raw, format string
	maxTime, connect := 2*time.Minute, 2*time.Minute
	value := func(i *int) (string, bool) {
		if *i+1 == len(args) {
			fmt.Fprintf(stderr, "curl: option %s: requires parameter\n", args[*i])
			return "", false
		}
		*i++
		return args[*i], true
	}
	seconds := func(i *int) (time.Duration, bool) {
		v, ok := value(i)
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			fmt.Fprintf(stderr, "curl: option %s: expected a positive number\n", args[*i-1])
			return 0, false
		}
		return time.Duration(f * float64(time.Second)), true
	}
	for i := 0; i < len(args); i++ {
		var ok = true
		switch a := args[i]; a {
		case "-s", "--silent", "-S", "--show-error", "-g", "--globoff", "-q", "--disable":
		case "-i", "--include":
			headers = true
		case "-w", "--write-out":
			if format, ok = value(&i); ok && format != "%{http_code}" {
				fmt.Fprintf(stderr, "curl: option -w: only %%{http_code} is supported\n")
				return 2
			}
		case "-m", "--max-time":
			maxTime, ok = seconds(&i)
		case "--connect-timeout":
			connect, ok = seconds(&i)
		case "-f", "--fail":
			fail = true
		case "-k", "--insecure":
			insecure = true
		case "-L", "--location":
			follow = true
		case "-o", "--output":
			out, ok = value(&i)
		default:
			if len(a) > 1 && a[0] == '-' {
				fmt.Fprintf(stderr, "curl: option %s: is unknown\n", a)
				return 2
			}
			raw = a
		}
		if !ok {
			return 2
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "curl: (3) URL rejected: %q\n", raw)
		return 3
	}
	client := &http.Client{
		Timeout: maxTime,
		Transport: &http.Transport{
			Proxy:           http.ProxyFromEnvironment,
			DialContext:     (&net.Dialer{Timeout: connect}).DialContext,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // -k asks for it
		},
	}
	if !follow {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	resp, err := client.Get(u.String())
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			fmt.Fprintf(stderr, "curl: (28) %v\n", err)
			return 28
		}
		fmt.Fprintf(stderr, "curl: (7) %v\n", err)
		return 7
	}
	defer resp.Body.Close()
	if fail && resp.StatusCode >= 400 {
		fmt.Fprintf(stderr, "curl: (22) The requested URL returned error: %d\n", resp.StatusCode)
		return 22
	}
	w := stdout
	if out != "" && out != "-" {
		f, err := os.Create(out)
		if err != nil {
			fmt.Fprintf(stderr, "curl: (23) %v\n", err)
			return 23
		}
		defer f.Close()
		w = f
	}
	if headers {
		fmt.Fprintf(w, "%s %s\r\n", resp.Proto, resp.Status)
		_ = resp.Header.Write(w)
		fmt.Fprint(w, "\r\n")
	}
	if _, err := io.Copy(w, resp.Body); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "curl: (56) %v\n", err)
		return 56
	}
	if format != "" {
		fmt.Fprintf(stdout, "%03d", resp.StatusCode)
	}
	return 0
}
