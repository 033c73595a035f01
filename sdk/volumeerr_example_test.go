package sdk_test

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/sdk"
)

// A volume plugin picks the code of each error for the class it means; the
// host reads the class back with the same rule.
func ExampleClassifyVolumeError() {
	for _, err := range []error{
		status.Error(codes.InvalidArgument, "volume_id is required"),
		status.Error(codes.DeadlineExceeded, "backend did not answer in time"),
		status.Error(codes.Internal, "mkfs failed"),
		errors.New("connection reset while the call was out"),
	} {
		fmt.Println(sdk.ClassifyVolumeError(err))
	}
	// Output:
	// final
	// uncertain
	// final
	// uncertain
}
