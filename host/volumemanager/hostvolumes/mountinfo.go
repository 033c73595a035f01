package hostvolumes

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// mountPoints returns the mount points of a mountinfo table
// (/proc/self/mountinfo: the fifth field of each line, octal escapes
// undone).
func mountPoints(table []byte) (map[string]bool, error) {
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 5 {
			return nil, fmt.Errorf("mountinfo line %d: %d fields, want at least 5", n, len(fields))
		}
		out[unescapeOctal(fields[4])] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	return out, nil
}

// unescapeOctal undoes the \ooo escapes of the kernel (\040 for a space).
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
