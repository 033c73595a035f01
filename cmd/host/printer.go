package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// readFormats are the -o values of a read command.
var readFormats = []string{"table", "wide", "json", "yaml", "name"}

// outputFlag is the -o flag of a read command.
type outputFlag struct {
	format  string
	formats []string
}

// register adds -o with its default to cmd and checks its value before
// the command runs, so that a bad format fails before the host is asked.
func (o *outputFlag) register(cmd *cobra.Command, def string, formats ...string) {
	o.formats = formats
	cmd.Flags().StringVarP(&o.format, "output", "o", def, "output format: "+strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if !slices.Contains(o.formats, o.format) {
			return fmt.Errorf("-o %q: want one of %s", o.format, strings.Join(o.formats, ", "))
		}
		return nil
	}
}

// printer returns the printer of the chosen format writing to w.
func (o *outputFlag) printer(w io.Writer) *printer { return &printer{format: o.format, out: w} }

// table is what a read command shows as -o table, wide and name: the
// columns, the extra columns of -o wide, and the rows.
type table struct {
	header, wideHeader []string
	rows               []tableRow
}

// tableRow is one line of a table; name is its -o name form.
type tableRow struct {
	name        string
	cells, wide []string
}

// printer prints what read commands read, in one format for all of them.
// A list is printed with one call; a watch calls print for every change,
// and the table header comes once.
type printer struct {
	format  string
	out     io.Writer
	printed bool
	// widths are the table columns' widths so far.
	widths []int
}

// header prints the header of t now, in the table formats: a watch
// shows it before the first change comes.
func (p *printer) header(t table) error {
	if p.printed || (p.format != "table" && p.format != "wide") {
		return nil
	}
	t.rows = nil
	return p.print(nil, t)
}

// print prints v as JSON or YAML, or t in the other formats.
func (p *printer) print(v any, t table) error {
	first := !p.printed
	p.printed = true
	switch p.format {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding JSON: %w", err)
		}
		_, err = p.out.Write(append(b, '\n'))
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding YAML: %w", err)
		}
		if !first {
			b = append([]byte("---\n"), b...)
		}
		_, err = p.out.Write(b)
		return err
	case "name":
		for _, r := range t.rows {
			if _, err := fmt.Fprintln(p.out, r.name); err != nil {
				return err
			}
		}
		return nil
	}
	var lines [][]string
	if first && len(t.header) > 0 {
		lines = append(lines, p.cells(t.header, t.wideHeader))
	}
	for _, r := range t.rows {
		lines = append(lines, p.cells(r.cells, r.wide))
	}
	return p.writeAligned(lines)
}

// cells are the columns of one line in the chosen format.
func (p *printer) cells(cells, wide []string) []string {
	if p.format == "wide" {
		return append(slices.Clip(cells), wide...)
	}
	return cells
}

// writeAligned writes lines in columns two spaces apart. A column is as
// wide as its widest cell so far, so that the lines of later calls (the
// changes of a watch) stay under the header as long as their cells fit.
func (p *printer) writeAligned(lines [][]string) error {
	for _, cells := range lines {
		for i, c := range cells {
			if i == len(p.widths) {
				p.widths = append(p.widths, 0)
			}
			p.widths[i] = max(p.widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, cells := range lines {
		for i, c := range cells {
			b.WriteString(c)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", p.widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(p.out, b.String())
	return err
}
