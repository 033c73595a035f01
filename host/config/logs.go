package config

import (
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Defaults of the logging fields, the kubelet's where it has the field.
const (
	DefaultLogFormat                   = "text"
	DefaultContainerLogMaxSize         = "10Mi"
	DefaultContainerLogMaxFiles        = 5
	DefaultContainerLogMonitorInterval = 10 * time.Second
)

// maxLogSize bounds containerLogMaxSize so that it fits in an int64.
var maxLogSize = resource.MustParse("1Ei")

// ContainerLogMaxBytes is ContainerLogMaxSize in bytes, rounded up.
func (c *HostConfig) ContainerLogMaxBytes() int64 { return c.ContainerLogMaxSize.Value() }

// LogFormats lists the accepted values of logFormat.
var LogFormats = []string{"text", "json"}

// quantity decodes a resource quantity such as "10Mi" or 1048576.
func (d *decoder) quantity(n *yaml.Node, v reflect.Value, path string, line int) {
	const want = `a quantity such as "10Mi" or "500Ki"`
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && n.ShortTag() != "!!int") {
		d.typeError(path, line, n, want)
		return
	}
	q, err := resource.ParseQuantity(n.Value)
	if err != nil {
		d.p.add(path, line, err, "want %s, got %s", want, describe(n))
		return
	}
	v.Set(reflect.ValueOf(q))
}

// applyLogDefaults fills in the logging fields the document left out.
func (c *HostConfig) applyLogDefaults() {
	if c.LogFormat == "" {
		c.LogFormat = DefaultLogFormat
	}
	if c.ContainerLogMaxSize.IsZero() && !c.meta.setNonNull("containerLogMaxSize") {
		c.ContainerLogMaxSize = resource.MustParse(DefaultContainerLogMaxSize)
	}
	if c.ContainerLogMaxFiles == 0 && !c.meta.setNonNull("containerLogMaxFiles") {
		c.ContainerLogMaxFiles = DefaultContainerLogMaxFiles
	}
	if c.ContainerLogMonitorInterval == 0 && !c.meta.setNonNull("containerLogMonitorInterval") {
		c.ContainerLogMonitorInterval = DefaultContainerLogMonitorInterval
	}
}

// checkLogs checks the logging fields.
func (c *HostConfig) checkLogs(p *problems) {
	line := c.meta.lineOf
	if c.LogFormat != "" && !slices.Contains(LogFormats, c.LogFormat) {
		p.add("logFormat", line("logFormat"), nil, "want one of %s; got %q", strings.Join(LogFormats, ", "), c.LogFormat)
	}
	switch size := &c.ContainerLogMaxSize; {
	case size.Sign() <= 0:
		p.add("containerLogMaxSize", line("containerLogMaxSize"), nil, "want a positive size, got %s", size)
	case size.Cmp(maxLogSize) > 0:
		p.add("containerLogMaxSize", line("containerLogMaxSize"), nil, "too large; want at most %s", &maxLogSize)
	}
	if c.ContainerLogMaxFiles < 2 {
		p.add("containerLogMaxFiles", line("containerLogMaxFiles"), nil, "want at least 2 (the file being written and one rotated), got %d", c.ContainerLogMaxFiles)
	}
	if c.ContainerLogMonitorInterval <= 0 {
		p.add("containerLogMonitorInterval", line("containerLogMonitorInterval"), nil, "want a positive duration, got %s", c.ContainerLogMonitorInterval)
	}
}
