package criproxy

import "fmt"

// frame is one gRPC message, kept as the bytes on the wire.
type frame struct{ b []byte }

// rawCodec passes frames through without decoding them. It calls itself
// "proto" so that the content type on both legs stays application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("criproxy: cannot marshal %T", v)
	}
	return f.b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("criproxy: cannot unmarshal into %T", v)
	}
	f.b = append(f.b[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }
