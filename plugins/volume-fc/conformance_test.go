package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/podhost/podhost/plugins/internal/scsitest"
	"github.com/podhost/podhost/sdk/volumetest"
)

func TestMain(m *testing.M) {
	scsitest.Main() // the fake multipath, when re-executed as one
	os.Exit(m.Run())
}

// fcSetup serves volume-fc against a fresh fake tree whose LUNs are real
// loop devices, one per volume the kit asks for.
func fcSetup(t *testing.T) (volumetest.Setup, *server, *scsitest.Fake) {
	scsitest.NeedRoot(t)
	f := scsitest.New(t)
	p := newPlugin("test")
	s := p.Volume.(*server)
	cfg := fmt.Sprintf(`{"sysfsRoot":%q,"devRoot":%q,"multipath":%q,"stateDir":%q,"cleanupBudget":"0s"}`,
		f.Tree.Sys, f.Tree.Dev, f.Command("multipath"), filepath.Join(f.Root, "state"))
	luns := 0
	return volumetest.Setup{
		Plugin: p,
		Config: cfg,
		Midway: &s.Volumes.Midway,
		NewVolume: func(t *testing.T) volumetest.Volume {
			luns++
			disk := fmt.Sprintf("sd%c", 'a'+luns)
			f.AddDisk(disk, scsitest.Loop(t, 16<<20))
			f.AddFCLink("50060e801049cfd1", fmt.Sprint(luns), disk)
			return volumetest.Volume{ID: fmt.Sprintf("fc-lun-%d", luns), Context: map[string]string{keyWWNs: "50060e801049cfd1", keyLUN: fmt.Sprint(luns)}}
		},
	}, s, f
}

func TestConformance(t *testing.T) {
	volumetest.Run(t, func(t *testing.T) volumetest.Setup {
		s, _, _ := fcSetup(t)
		return s
	})
}
