package sdk

import "testing"

func TestUnixSocketPath(t *testing.T) {
	tests := []struct {
		endpoint string
		want     string
		wantErr  string
	}{
		{endpoint: "unix:///run/containerd/containerd.sock", want: "/run/containerd/containerd.sock"},
		{endpoint: "unix:///run//x/../plugin.sock", want: "/run/plugin.sock"},
		{endpoint: "", wantErr: "is required"},
		{endpoint: "/run/plugin.sock", wantErr: `must be a unix:// address, such as "unix:///run/plugin.sock"`},
		{endpoint: "tcp://127.0.0.1:1", wantErr: `must be a unix:// address, such as "unix:///run/plugin.sock"`},
		{endpoint: "unix://run/plugin.sock", wantErr: "must name an absolute socket path after unix://"},
		{endpoint: "unix://", wantErr: "must name an absolute socket path after unix://"},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			got, err := UnixSocketPath(tt.endpoint)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.wantErr {
				t.Errorf("got %q, %q; want %q, %q", got, gotErr, tt.want, tt.wantErr)
			}
		})
	}
}
