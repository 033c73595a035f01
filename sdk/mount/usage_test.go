package mount

import "testing"

func TestUsageOf(t *testing.T) {
	tests := []struct {
		name                                string
		blocks, bfree, bavail, files, ffree uint64
		frsize, bsize                       int64
		want                                Usage
	}{
		{
			name: "ext4 with reserved blocks", blocks: 100, bfree: 40, bavail: 30, files: 50, ffree: 20, frsize: 4096, bsize: 4096,
			want: Usage{TotalBytes: 409600, UsedBytes: 245760, AvailableBytes: 122880, TotalInodes: 50, UsedInodes: 30, AvailableInodes: 20},
		},
		{
			name: "no fragment size", blocks: 10, bfree: 10, bavail: 10, frsize: 0, bsize: 512,
			want: Usage{TotalBytes: 5120, AvailableBytes: 5120},
		},
		{
			name: "inconsistent counts are clamped", blocks: 10, bfree: 20, bavail: 30, files: 5, ffree: 9, frsize: 1,
			want: Usage{TotalBytes: 10, AvailableBytes: 10, TotalInodes: 5, AvailableInodes: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := usageOf(tt.blocks, tt.bfree, tt.bavail, tt.files, tt.ffree, tt.frsize, tt.bsize); got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}
