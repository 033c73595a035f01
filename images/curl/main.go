// Command curl is the small part of curl that the upstream e2e suite's
// lifecycle hooks use in the agnhost image (`curl http://IP:8080/echo?msg=…`
// in an exec hook): a GET of one URL whose body goes to standard output,
// with curl's -s, -S, -f, -k, -L and -o FILE, and curl's exit codes: 0 for
// any HTTP answer (22 with -f for a status of 400 or more), 7 when it
// cannot connect, 3 for a bad URL, 2 for a bad option. The conformance
// harness builds it static (CGO_ENABLED=0) into the agnhost image as
// /usr/bin/curl (test/conformance), because the image is built on busybox,
// which has no curl; it is no general curl and not for anything else.
package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	var fail, insecure, follow bool
	var out, raw string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-s", "--silent", "-S", "--show-error":
		case "-f", "--fail":
			fail = true
		case "-k", "--insecure":
			insecure = true
		case "-L", "--location":
			follow = true
		case "-o", "--output":
			if i+1 == len(args) {
				fmt.Fprintln(stderr, "curl: option -o: requires parameter")
				return 2
			}
			i++
			out = args[i]
		default:
			if len(a) > 1 && a[0] == '-' {
				fmt.Fprintf(stderr, "curl: option %s: is unknown\n", a)
				return 2
			}
			raw = a
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "curl: (3) URL rejected: %q\n", raw)
		return 3
	}
	client := &http.Client{
		Timeout:   2 * time.Minute,
		Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure}}, //nolint:gosec // -k asks for it
	}
	if !follow {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	resp, err := client.Get(u.String())
	if err != nil {
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
	if _, err := io.Copy(w, resp.Body); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "curl: (56) %v\n", err)
		return 56
	}
	return 0
}
