package stats

import (
	"os"
	"strings"
)

// LoadAvg is the machine's 1-minute load average, for the header of a
// result, or "?".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
