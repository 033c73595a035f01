package scsi

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// FCTarget names an FC LUN: by target WWNs and LUN, or by WWIDs.
type FCTarget struct {
	WWNs  []string
	LUN   string
	WWIDs []string
}

// Validate checks that t names a LUN one way.
func (t FCTarget) Validate() error {
	switch {
	case len(t.WWNs) > 0 && len(t.WWIDs) > 0:
		return fmt.Errorf("fc: give target WWNs and a LUN or WWIDs, not both")
	case len(t.WWNs) > 0 && t.LUN == "":
		return fmt.Errorf("fc: target WWNs need a LUN")
	case len(t.WWNs) == 0 && len(t.WWIDs) == 0:
		return fmt.Errorf("fc: no fc disk information found: give target WWNs and a LUN, or WWIDs")
	}
	for _, w := range append(append([]string{}, t.WWNs...), t.WWIDs...) {
		if w == "" || strings.ContainsAny(w, "/\x00") {
			return fmt.Errorf("fc: invalid WWN or WWID %q", w)
		}
	}
	return nil
}

// findOnce searches /dev/disk once: the first disk of an ID with a
// multipath holder, else the first disk found.
func (t Tree) findFCOnce(target FCTarget) (Disk, bool) {
	var first *Disk
	try := func(link string) bool {
		name, ok := t.resolve(link)
		if !ok {
			return false
		}
		d := t.disk(name)
		if IsMultipath(d.Name) {
			first = &d
			return true
		}
		if first == nil {
			first = &d
		}
		return false
	}
	if len(target.WWIDs) > 0 {
		for _, id := range target.WWIDs {
			if try(filepath.Join(t.Dev, "disk", "by-id", "scsi-"+strings.ReplaceAll(id, " ", "_"))) {
				break
			}
		}
	} else {
		entries, _ := os.ReadDir(filepath.Join(t.Dev, "disk", "by-path"))
	wwns:
		for _, wwn := range target.WWNs {
			re := regexp.MustCompile("^(pci-.*-fc|fc)-0x" + regexp.QuoteMeta(wwn) + "-lun-" + regexp.QuoteMeta(target.LUN) + "$")
			for _, e := range entries {
				if re.MatchString(e.Name()) && try(filepath.Join(t.Dev, "disk", "by-path", e.Name())) {
					break wwns
				}
			}
		}
	}
	if first == nil {
		return Disk{}, false
	}
	return *first, true
}

// FindFC finds the disk of an FC LUN. When the first search finds no
// multipath device it rescans every SCSI host and searches once more. It
// prefers a multipath device to a plain disk.
func (t Tree) FindFC(target FCTarget) (Disk, error) {
	if err := target.Validate(); err != nil {
		return Disk{}, err
	}
	d, ok := t.findFCOnce(target)
	if !ok || !IsMultipath(d.Name) {
		if err := t.RescanAll(); err != nil {
			return Disk{}, fmt.Errorf("fc: rescanning scsi hosts: %w", err)
		}
		if again, found := t.findFCOnce(target); found {
			d, ok = again, true
		}
	}
	if !ok {
		return Disk{}, fmt.Errorf("fc: no fc disk found for %v: %w", target, ErrNoDisk)
	}
	if _, err := os.Stat(t.DevPath(d.Name)); err != nil {
		return Disk{}, fmt.Errorf("fc: device %s does not exist: %w", t.DevPath(d.Name), ErrNoDisk)
	}
	return d, nil
}

// ExistingFC finds the disk of an FC LUN without rescanning; ok is false
// when none is there.
func (t Tree) ExistingFC(target FCTarget) (Disk, bool) {
	if target.Validate() != nil {
		return Disk{}, false
	}
	return t.findFCOnce(target)
}
