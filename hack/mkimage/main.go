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
	"strings"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/images/ociarchive"
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

	if *out == "" || *name == "" || fs.NArg() == 0 {
		return fmt.Errorf("need -local DIR, or -o FILE -name NAME and HOSTPATH=IMAGEPATH arguments")
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
