// Command mkimage writes OCI image layout archives that
// `ctr -n k8s.io images import FILE` loads into containerd without a
// registry.
//
//	mkimage -local DIR
//
// builds podhost's own images (images/localimages: podhost.local/pause:1 and
// podhost.local/busybox:1) into DIR/pause.tar and DIR/busybox.tar. Run it
// inside the module; it compiles images/pause.
//
//	mkimage -e2e DIR [-kube-bin KUBEDIR]
//
// writes the images the upstream e2e suite names that are built locally
// (test/conformance: agnhost, busybox, nonewprivs, nonroot, pause) into
// DIR, under the names `KUBEDIR/e2e.test --list-images` prints, from the
// binaries hack/e2e-binaries.sh put in KUBEDIR (default: its cache). The
// images not built are listed on standard error with the reason.
//
//	mkimage -o FILE -name NAME [-entrypoint JSON] [-cmd JSON] [-env K=V]... HOSTPATH=IMAGEPATH...
//
// writes an image of the given host files.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/images/ociarchive"
	"github.com/podhost/podhost/test/conformance"
	"github.com/podhost/podhost/test/kubecluster"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mkimage", flag.ContinueOnError)
	local := fs.String("local", "", "write podhost's pause and busybox archives into this `dir`")
	e2e := fs.String("e2e", "", "write the upstream e2e suite's images built here into this `dir`")
	kubeBin := fs.String("kube-bin", "", "`dir` of e2e.test, agnhost and nonewprivs (default: hack/e2e-binaries.sh's cache)")
	out := fs.String("o", "", "archive `file` to write")
	name := fs.String("name", "", "full image `name`, e.g. podhost.local/tool:1")
	entrypoint := fs.String("entrypoint", "", "entrypoint as a JSON array")
	cmd := fs.String("cmd", "", "default command as a JSON array")
	gzipOff := fs.Bool("uncompressed", false, "write the layer as a plain tar")
	var env listFlag
	fs.Var(&env, "env", "environment `K=V` (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	if *local != "" {
		if err := os.MkdirAll(*local, 0o755); err != nil {
			return err
		}
		archives, err := localimages.WriteArchives(ctx, *local)
		if err != nil {
			return err
		}
		for _, a := range archives {
			fmt.Printf("%s\t%s\t%s\n", a.Path, a.Name, a.Written.ManifestDigest)
		}
		return nil
	}

	if *e2e != "" {
		return writeE2E(ctx, *e2e, *kubeBin)
	}

	if *out == "" || *name == "" || fs.NArg() == 0 {
		return fmt.Errorf("need -local DIR, -e2e DIR, or -o FILE -name NAME and HOSTPATH=IMAGEPATH arguments")
	}
	img := ociarchive.Image{Name: *name, Uncompressed: *gzipOff}
	img.Config.Env = env
	for flagName, dst := range map[string]*[]string{"entrypoint": &img.Config.Entrypoint, "cmd": &img.Config.Cmd} {
		v := map[string]string{"entrypoint": *entrypoint, "cmd": *cmd}[flagName]
		if v == "" {
			continue
		}
		if err := json.Unmarshal([]byte(v), dst); err != nil {
			return fmt.Errorf("-%s: want a JSON array of strings: %w", flagName, err)
		}
	}
	for _, arg := range fs.Args() {
		src, dst, ok := strings.Cut(arg, "=")
		if !ok || src == "" || dst == "" {
			return fmt.Errorf("argument %q: want HOSTPATH=IMAGEPATH", arg)
		}
		info, err := os.Stat(src)
		if err != nil {
			return err
		}
		if info.IsDir() {
			img.Entries = append(img.Entries, ociarchive.Dir(dst, info.Mode()))
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		img.Entries = append(img.Entries, ociarchive.File(dst, info.Mode(), data))
	}
	w, err := ociarchive.WriteFile(*out, img)
	if err != nil {
		return err
	}
	fmt.Printf("%s\t%s\t%s\n", *out, w.Name, w.ManifestDigest)
	return nil
}

func writeE2E(ctx context.Context, dir, kubeBin string) error {
	if kubeBin == "" {
		bins, err := kubecluster.FindBinaries()
		if err != nil {
			return err
		}
		kubeBin = filepath.Dir(bins.APIServer)
	}
	names, err := conformance.ListImages(ctx, filepath.Join(kubeBin, "e2e.test"))
	if err != nil {
		return err
	}
	archives, unavailable, err := conformance.WriteImages(ctx, dir, names, conformance.SourcesIn(kubeBin))
	if err != nil {
		return err
	}
	for _, a := range archives {
		fmt.Printf("%s\t%s\n", a.Path, a.Name)
	}
	for _, u := range unavailable {
		fmt.Fprintf(os.Stderr, "not built: %s: %s\n", u.Name, u.Reason)
	}
	return nil
}
