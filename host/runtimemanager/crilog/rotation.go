package crilog

import "os"

// replaced reports whether the file at path is no longer f: the host
// renamed f away to rotate it and the runtime made a new file at path. A
// missing path is no replacement: until the runtime reopens, f still gets
// what it writes.
func replaced(f *os.File, path string) bool {
	cur, err := os.Stat(path)
	if err != nil {
		return false
	}
	open, err := f.Stat()
	return err == nil && !os.SameFile(open, cur)
}
