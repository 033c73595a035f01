package config

import (
	"testing"
	"time"
)

func TestParseLogFieldsRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []want
	}{
		{"log format", "logFormat: yaml\n", []want{
			{"logFormat", 9, `want one of text, json; got "yaml"`},
		}},
		{"max size not a quantity", "containerLogMaxSize: ten megs\n", []want{
			{"containerLogMaxSize", 9, `want a quantity such as "10Mi" or "500Ki", got string "ten megs"`},
		}},
		{"max size a list", "containerLogMaxSize: [10Mi]\n", []want{
			{"containerLogMaxSize", 9, "want a quantity such as"},
		}},
		{"max size zero", "containerLogMaxSize: 0\n", []want{
			{"containerLogMaxSize", 9, "want a positive size, got 0"},
		}},
		{"max size negative", "containerLogMaxSize: -1Mi\n", []want{
			{"containerLogMaxSize", 9, "want a positive size, got -1Mi"},
		}},
		{"max size too large", "containerLogMaxSize: 9Ei\n", []want{
			{"containerLogMaxSize", 9, "too large; want at most 1Ei"},
		}},
		{"max files one", "containerLogMaxFiles: 1\n", []want{
			{"containerLogMaxFiles", 9, "want at least 2 (the file being written and one rotated), got 1"},
		}},
		{"max files zero", "containerLogMaxFiles: 0\n", []want{
			{"containerLogMaxFiles", 9, "want at least 2"},
		}},
		{"max files a string", "containerLogMaxFiles: \"5\"\n", []want{
			{"containerLogMaxFiles", 9, `want an integer, got string "5"`},
		}},
		{"max files a fraction", "containerLogMaxFiles: 2.5\n", []want{
			{"containerLogMaxFiles", 9, "want an integer, got number 2.5"},
		}},
		{"max files beyond int", "containerLogMaxFiles: 99999999999999999999\n", []want{
			{"containerLogMaxFiles", 9, "want an integer"},
		}},
		{"monitor interval zero", "containerLogMonitorInterval: 0s\n", []want{
			{"containerLogMonitorInterval", 9, "want a positive duration, got 0s"},
		}},
		{"misspelt max size", "containerLogMaxSise: 10Mi\n", []want{
			{"containerLogMaxSise", 9, `did you mean "containerLogMaxSize"?`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(head+runtime+tc.doc), "host.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded with %+v; want errors %v", c, tc.want)
			}
			assertErrors(t, err, tc.want)
		})
	}
}

func TestParseLogFields(t *testing.T) {
	for _, tc := range []struct {
		name      string
		doc       string
		format    string
		bytes     int64
		files     int
		interval  time.Duration
		sizeShown string
	}{
		{"defaults", "", "text", 10 << 20, 5, 10 * time.Second, "10Mi"},
		{"nulls are defaults", "logFormat: ~\ncontainerLogMaxSize: ~\ncontainerLogMaxFiles:\n", "text", 10 << 20, 5, 10 * time.Second, "10Mi"},
		{"json", "logFormat: json\n", "json", 10 << 20, 5, 10 * time.Second, "10Mi"},
		{"binary suffix", "containerLogMaxSize: 500Ki\ncontainerLogMaxFiles: 2\n", "text", 500 << 10, 2, 10 * time.Second, "500Ki"},
		{"decimal suffix", "containerLogMaxSize: 1M\n", "text", 1_000_000, 5, 10 * time.Second, "1M"},
		{"plain bytes", "containerLogMaxSize: 4096\n", "text", 4096, 5, 10 * time.Second, "4096"},
		{"fraction rounds up", "containerLogMaxSize: 1.5Ki\n", "text", 1536, 5, 10 * time.Second, "1536"},
		{"interval", "containerLogMonitorInterval: 250ms\n", "text", 10 << 20, 5, 250 * time.Millisecond, "10Mi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(head+runtime+tc.doc), "host.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if c.LogFormat != tc.format || c.ContainerLogMaxBytes() != tc.bytes || c.ContainerLogMaxFiles != tc.files || c.ContainerLogMonitorInterval != tc.interval {
				t.Errorf("got format %q, %d bytes, %d files, every %s; want %q, %d, %d, %s",
					c.LogFormat, c.ContainerLogMaxBytes(), c.ContainerLogMaxFiles, c.ContainerLogMonitorInterval, tc.format, tc.bytes, tc.files, tc.interval)
			}
			if got := c.ContainerLogMaxSize.String(); got != tc.sizeShown {
				t.Errorf("size shown as %q; want %q", got, tc.sizeShown)
			}
		})
	}
}
