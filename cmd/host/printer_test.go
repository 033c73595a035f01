package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestPrinterList(t *testing.T) {
	var out bytes.Buffer
	tbl := table{header: []string{"NAME", "PHASE", "REASON"}, rows: []tableRow{
		{cells: []string{"default/web", "Running", "-"}}, {cells: []string{"a/b", "Pending", "ContainerCreating"}}}}
	if err := (&outputFlag{format: "table"}).printer(&out).print(nil, tbl); err != nil {
		t.Fatal(err)
	}
	want := "NAME         PHASE    REASON\ndefault/web  Running  -\na/b          Pending  ContainerCreating\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestPrinterWatch(t *testing.T) {
	tbl := func(rows ...string) table {
		t := table{header: []string{"NAME", "PHASE"}, wideHeader: []string{"UID"}}
		for _, r := range rows {
			name, phase, _ := strings.Cut(r, " ")
			t.rows = append(t.rows, tableRow{name: name, cells: []string{name, phase}, wide: []string{"u-" + name}})
		}
		return t
	}
	type obj struct {
		Name string `json:"name"`
	}
	for _, tc := range []struct {
		format string
		want   string
	}{
		// The header comes before the first change; later lines keep
		// the columns as wide as they have been.
		{"table", "NAME  PHASE\ndefault/web  Pending\ndefault/web  Running\na/b          Running\n"},
		{"wide", "NAME  PHASE  UID\ndefault/web  Pending  u-default/web\ndefault/web  Running  u-default/web\na/b          Running  u-a/b\n"},
		{"name", "default/web\ndefault/web\na/b\n"},
		{"json", "{\n  \"name\": \"default/web\"\n}\n{\n  \"name\": \"default/web\"\n}\n{\n  \"name\": \"a/b\"\n}\n"},
		{"yaml", "name: default/web\n---\nname: default/web\n---\nname: a/b\n"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var out bytes.Buffer
			p := (&outputFlag{format: tc.format}).printer(&out)
			if err := p.header(tbl()); err != nil {
				t.Fatal(err)
			}
			for _, row := range []string{"default/web Pending", "default/web Running", "a/b Running"} {
				name, _, _ := strings.Cut(row, " ")
				if err := p.print(obj{name}, tbl(row)); err != nil {
					t.Fatal(err)
				}
			}
			if out.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tc.want)
			}
		})
	}
}
