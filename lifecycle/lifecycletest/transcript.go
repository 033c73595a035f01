package lifecycletest

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Cmd is one transcript command: a name, positional arguments and
// key=value options. A bare word after the name is positional unless it
// contains '='.
type Cmd struct {
	Line string
	Name string
	Args []string
	Opts map[string]string
	pos  int // line number, for messages
}

// Has reports whether key was given (with or without a value).
func (c *Cmd) Has(key string) bool { _, ok := c.Opts[key]; return ok }

// Opt returns the value of key, or def.
func (c *Cmd) Opt(key, def string) string {
	if v, ok := c.Opts[key]; ok {
		return v
	}
	return def
}

func parseCmd(line string, pos int) *Cmd {
	fields := strings.Fields(line)
	c := &Cmd{Line: line, Name: fields[0], Opts: map[string]string{}, pos: pos}
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			c.Opts[k] = v
			continue
		}
		c.Args = append(c.Args, f)
		c.Opts[f] = ""
	}
	return c
}

// RunTranscript runs every command of a transcript file through run and
// compares the output with the text after "----". With update set, the
// file is rewritten with the actual output instead.
//
// Format: comment lines start with '#'. A command is one line, followed by
// a line "----" and the expected output, which ends at a blank line.
func RunTranscript(t *testing.T, path string, update bool, run func(*Cmd) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			if i < len(lines)-1 || line != "" {
				out.WriteString(line + "\n")
			}
			continue
		}
		cmd := parseCmd(trimmed, i+1)
		i++
		var want []string
		if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				want = append(want, lines[i])
			}
		} else {
			i--
		}
		got := strings.TrimRight(run(cmd), "\n")
		if got == "" {
			got = "ok"
		}
		out.WriteString(trimmed + "\n----\n" + got + "\n")
		if i < len(lines) {
			out.WriteString("\n")
		}
		if w := strings.Join(want, "\n"); !update && w != got {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, cmd.pos, trimmed, got, w)
		}
	}
	if update {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Errorf formats a harness error as transcript output.
func Errorf(format string, args ...any) string { return "error: " + fmt.Sprintf(format, args...) }

// ReadLines is a helper for tests that scan transcript files.
func ReadLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}

// ParseCmd parses one command line, for tests that drive the harness
// without a transcript.
func ParseCmd(line string) *Cmd { return parseCmd(line, 0) }
