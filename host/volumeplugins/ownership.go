package volumeplugins

import (
	"errors"
	"fmt"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/ownership"
)

// giveToFSGroup gives an FC or iSCSI filesystem volume, published at
// target, to the pod's fsGroup as the kubelet's FC and iSCSI plugins do
// after their SetUp: when the pod has an fsGroup and the volume is
// writable, with the pod's fsGroupChangePolicy. A walk that failed only
// on some entries is success, as under the kubelet, which ignores the
// walk's errors; one that could not read the volume fails the publish.
func giveToFSGroup(target string, pv volumemanager.PodVolume) error {
	g := pv.Args.FSGroup
	if g == nil || pv.Volume.ReadOnly {
		return nil
	}
	o := ownership.Options{FSGroup: *g}
	if p := pv.Args.FSGroupChangePolicy; p != nil {
		o.Policy = *p
	}
	if err := ownership.Change(target, o); err != nil && !errors.Is(err, ownership.ErrIncomplete) {
		return fmt.Errorf("giving volume %q to fsGroup %d: %w", pv.Name, *g, err)
	}
	return nil
}
