package scsitest

import (
	"fmt"
	"path/filepath"

	"github.com/podhost/podhost/plugins/internal/scsi"
)

type scsiTree = scsi.Tree

func treeAt(root string) scsi.Tree {
	return scsi.Tree{Sys: filepath.Join(root, "sys"), Dev: filepath.Join(root, "dev")}
}

// iscsiadm is filled in with the iSCSI plugin.
func iscsiadm(_ *Fake, args []string) (int, string) {
	return 1, fmt.Sprintf("fake iscsiadm: unsupported arguments %q\n", args)
}
