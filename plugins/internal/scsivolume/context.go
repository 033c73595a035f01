package scsivolume

import (
	"strings"

	"github.com/podhost/podhost/plugins/internal/scsi"
)

// The publish context keys Attach sets.
const (
	keyDisk  = "disk"  // kernel name of the device to use: dm-0, sdb
	keyPaths = "paths" // the SCSI disks under it, comma-separated
)

func publishContext(d scsi.Disk) map[string]string {
	return map[string]string{keyDisk: d.Name, keyPaths: strings.Join(d.Paths, ",")}
}

func diskOf(pc map[string]string) (scsi.Disk, bool) {
	name := pc[keyDisk]
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return scsi.Disk{}, false
	}
	d := scsi.Disk{Name: name}
	for _, p := range strings.Split(pc[keyPaths], ",") {
		if p != "" && !strings.ContainsAny(p, "/\x00") && p != "." && p != ".." {
			d.Paths = append(d.Paths, p)
		}
	}
	return d, true
}

// List splits a comma-separated volume context value, dropping blanks.
func List(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
