package sdk

import "github.com/podhost/podhost/pluginapi/volumeerr"

// VolumeErrorClass is the class of a failed volume call under the error rule
// of proto/volume/v1: VolumeFinal, VolumeUncertain or VolumeTransient. It is
// the contract's volumeerr.Class, re-exported so that a plugin can check
// that the codes it answers fall in the class it means.
type VolumeErrorClass = volumeerr.Class

// The classes of a failed volume call.
const (
	VolumeFinal     = volumeerr.Final
	VolumeUncertain = volumeerr.Uncertain
	VolumeTransient = volumeerr.Transient
)

// ClassifyVolumeError returns the class the host gives err, the error of a
// volume call as the host receives it.
func ClassifyVolumeError(err error) VolumeErrorClass { return volumeerr.Classify(err) }
