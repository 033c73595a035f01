package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"sigs.k8s.io/yaml"
)

// fileConfig is the config file as written (YAML or JSON). Durations and
// codes stay strings here so that parse can name the field that is wrong.
type fileConfig struct {
	Endpoint          string      `json:"endpoint"`
	StateDir          string      `json:"stateDir"`
	NodeID            string      `json:"nodeID"`
	DriverName        string      `json:"driverName"`
	CallLog           string      `json:"callLog"`
	DefaultVolumeSize string      `json:"defaultVolumeSize"`
	Capabilities      fileCaps    `json:"capabilities"`
	Faults            []fileFault `json:"faults"`
	Volumes           []string    `json:"volumes"`
	// Topology and MaxVolumesPerNode are NodeGetInfo's
	// accessible_topology segments and max_volumes_per_node.
	Topology          map[string]string `json:"topology"`
	MaxVolumesPerNode int64             `json:"maxVolumesPerNode"`
}

type fileCaps struct {
	StageUnstage *bool `json:"stageUnstage"`
	VolumeStats  *bool `json:"volumeStats"`
}

type fileFault struct {
	RPC    string `json:"rpc"`
	Action string `json:"action"`
	Code   string `json:"code"`
	Times  int    `json:"times"`
	Delay  string `json:"delay"`
	Volume string `json:"volume"`
}

// config is the driver's validated configuration.
type config struct {
	// endpoint is the path of the unix socket the driver listens on.
	endpoint   string
	stateDir   string
	nodeID     string
	driverName string
	// callLog is the JSON-lines file each call is appended to; empty for none.
	callLog string
	// defaultVolumeSize is the size of a volume created without a capacity.
	defaultVolumeSize int64
	stageUnstage      bool
	volumeStats       bool
	faults            []fault
	// volumes are created at start (defaultVolumeSize each), for a CO
	// that has no provisioner: the demo's static PersistentVolume.
	volumes []string
	// topology and maxVolumes are what NodeGetInfo says beside the node ID.
	topology   map[string]string
	maxVolumes int64
}

// faultAction is what a fault does to a call.
type faultAction string

const (
	// actionFail answers the call with the fault's code, doing nothing.
	actionFail faultAction = "fail"
	// actionDelay is a slow driver: it waits the fault's delay, then
	// serves the call, even when the caller has given up meanwhile.
	actionDelay faultAction = "delay"
	// actionHang serves nothing and answers only when the caller gives up
	// (its deadline or cancellation) or the driver stops.
	actionHang faultAction = "hang"
)

// fault is one configured fault: it applies to the first Times calls of
// RPC (every call when Times is 0), optionally only for one volume.
type fault struct {
	rpc    string
	action faultAction
	code   codes.Code
	times  int
	delay  time.Duration
	volume string
}

const (
	defaultDriverName = "loop.csi.podhost.dev"
	defaultSize       = 1 << 30
	// minVolumeSize is the smallest volume: mkfs needs some room.
	minVolumeSize = 16 << 20
)

// rpcNames are the RPCs a fault may name.
var rpcNames = map[string]bool{
	"GetPluginInfo": true, "GetPluginCapabilities": true, "Probe": true,
	"CreateVolume": true, "DeleteVolume": true, "ValidateVolumeCapabilities": true,
	"ControllerGetCapabilities": true,
	"NodeStageVolume":           true, "NodeUnstageVolume": true,
	"NodePublishVolume": true, "NodeUnpublishVolume": true,
	"NodeGetVolumeStats": true, "NodeGetCapabilities": true, "NodeGetInfo": true,
}

// loadConfig reads and validates the config file at path.
func loadConfig(path string) (config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return config{}, fmt.Errorf("reading config: %w", err)
	}
	c, err := parseConfig(data)
	if err != nil {
		return config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// parseConfig parses a YAML or JSON config; an error names the field.
func parseConfig(data []byte) (config, error) {
	var f fileConfig
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return config{}, fmt.Errorf("parsing: %w", err)
	}
	c := config{
		endpoint:          strings.TrimPrefix(f.Endpoint, "unix://"),
		stateDir:          f.StateDir,
		nodeID:            f.NodeID,
		driverName:        f.DriverName,
		callLog:           f.CallLog,
		defaultVolumeSize: defaultSize,
		stageUnstage:      f.Capabilities.StageUnstage == nil || *f.Capabilities.StageUnstage,
		volumeStats:       f.Capabilities.VolumeStats == nil || *f.Capabilities.VolumeStats,
		topology:          f.Topology,
		maxVolumes:        f.MaxVolumesPerNode,
	}
	if c.driverName == "" {
		c.driverName = defaultDriverName
	}
	var errs []error
	for i, name := range f.Volumes {
		if name == "" || strings.ContainsAny(name, "/\x00") {
			errs = append(errs, fmt.Errorf("volumes[%d]: %q is not a volume name", i, name))
		}
		c.volumes = append(c.volumes, name)
	}
	switch {
	case c.endpoint == "":
		errs = append(errs, errors.New("endpoint: required (unix:///path or /path)"))
	case !filepath.IsAbs(c.endpoint):
		errs = append(errs, fmt.Errorf("endpoint: %q is not an absolute unix socket path", f.Endpoint))
	}
	switch {
	case c.stateDir == "":
		errs = append(errs, errors.New("stateDir: required"))
	case !filepath.IsAbs(c.stateDir):
		errs = append(errs, fmt.Errorf("stateDir: %q is not absolute", c.stateDir))
	}
	if c.nodeID == "" {
		errs = append(errs, errors.New("nodeID: required"))
	}
	if c.maxVolumes < 0 {
		errs = append(errs, fmt.Errorf("maxVolumesPerNode: must not be negative, got %d", c.maxVolumes))
	}
	if c.callLog != "" && !filepath.IsAbs(c.callLog) {
		errs = append(errs, fmt.Errorf("callLog: %q is not absolute", c.callLog))
	}
	if f.DefaultVolumeSize != "" {
		n, err := parseSize(f.DefaultVolumeSize)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("defaultVolumeSize: %w", err))
		case n < minVolumeSize:
			errs = append(errs, fmt.Errorf("defaultVolumeSize: %s is below the minimum of 16Mi", f.DefaultVolumeSize))
		default:
			c.defaultVolumeSize = n
		}
	}
	for i, ff := range f.Faults {
		flt, err := parseFault(ff)
		if err != nil {
			errs = append(errs, fmt.Errorf("faults[%d].%w", i, err))
			continue
		}
		c.faults = append(c.faults, flt)
	}
	return c, errors.Join(errs...)
}

// parseFault validates one fault; the error starts with the field name.
func parseFault(ff fileFault) (fault, error) {
	f := fault{rpc: ff.RPC, action: faultAction(ff.Action), times: ff.Times, volume: ff.Volume}
	if !rpcNames[ff.RPC] {
		return fault{}, fmt.Errorf("rpc: %q is not an RPC of the driver", ff.RPC)
	}
	if ff.Times < 0 {
		return fault{}, fmt.Errorf("times: %d is negative (0 means every call)", ff.Times)
	}
	switch f.action {
	case actionFail:
		code, ok := codeByName(ff.Code)
		if !ok {
			return fault{}, fmt.Errorf("code: %q is not a gRPC code name (like DeadlineExceeded)", ff.Code)
		}
		if code == codes.OK {
			return fault{}, errors.New("code: OK is not a failure")
		}
		f.code = code
	case actionDelay:
		d, err := time.ParseDuration(ff.Delay)
		if err != nil || d <= 0 {
			return fault{}, fmt.Errorf("delay: %q is not a positive duration (like 3s)", ff.Delay)
		}
		f.delay = d
	case actionHang:
	default:
		return fault{}, fmt.Errorf("action: %q is not fail, delay or hang", ff.Action)
	}
	if f.action != actionFail && ff.Code != "" {
		return fault{}, fmt.Errorf("code: only a fail fault has a code, not %s", ff.Action)
	}
	if f.action != actionDelay && ff.Delay != "" {
		return fault{}, fmt.Errorf("delay: only a delay fault has a delay, not %s", ff.Action)
	}
	return f, nil
}

// codeByName maps a gRPC code name (DeadlineExceeded, or the
// DEADLINE_EXCEEDED spelling) to the code.
func codeByName(name string) (codes.Code, bool) {
	key := strings.ReplaceAll(strings.ToLower(name), "_", "")
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if strings.ToLower(c.String()) == key {
			return c, true
		}
	}
	return 0, false
}

// parseSize reads a byte count: a plain number or one with a Ki, Mi, Gi
// or Ti suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	num := s
	for i, suf := range []string{"Ki", "Mi", "Gi", "Ti"} {
		if v, ok := strings.CutSuffix(s, suf); ok {
			num, mult = v, int64(1)<<(10*(i+1))
			break
		}
	}
	var n int64
	if _, err := fmt.Sscanf(num, "%d", &n); err != nil || fmt.Sprint(n) != num || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive size (like 64Mi)", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}
