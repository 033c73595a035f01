package sdk

import "github.com/podhost/podhost/pluginapi"

// Kind is what a plugin provides: KindRuntime or KindVolume. It is the
// contract's pluginapi.Kind, re-exported so that a plugin imports only sdk.
type Kind = pluginapi.Kind

// The plugin kinds.
const (
	KindRuntime = pluginapi.KindRuntime
	KindVolume  = pluginapi.KindVolume
)

// The capability names a plugin lists in Plugin.Capabilities; the host
// uses a feature only when the plugin lists it.
const (
	// CapRuntimeEvents: the runtime serves the Events stream.
	CapRuntimeEvents = pluginapi.CapRuntimeEvents
	// CapVolumeMetrics: the volume plugin serves GetMetrics.
	CapVolumeMetrics = pluginapi.CapVolumeMetrics
	// CapVolumeBlock: the volume plugin maps raw block volumes.
	CapVolumeBlock = pluginapi.CapVolumeBlock
	// CapVolumeReconstruct: the volume plugin serves Reconstruct.
	CapVolumeReconstruct = pluginapi.CapVolumeReconstruct
	// CapVolumeFC: the volume plugin serves FC volumes (kubernetes.io/fc);
	// at most one plugin of a host may declare it.
	CapVolumeFC = pluginapi.CapVolumeFC
	// CapVolumeISCSI: the volume plugin serves iSCSI volumes
	// (kubernetes.io/iscsi); at most one plugin of a host may declare it.
	CapVolumeISCSI = pluginapi.CapVolumeISCSI
	// CapVolumeCSIRegistration: the volume plugin takes the CSI drivers
	// that register at run time (RegisterDriver, DeregisterDriver); at
	// most one plugin of a host may declare it.
	CapVolumeCSIRegistration = pluginapi.CapVolumeCSIRegistration
)

// ContractVersion is the version of the proto/<kind>/v1 services this SDK
// speaks, which GetInfo lists when Plugin.ContractVersions is empty.
const ContractVersion = pluginapi.ContractVersion
