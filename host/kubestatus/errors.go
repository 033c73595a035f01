package kubestatus

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podhost/podhost/lifecycle"
)

// translate maps an API server error onto the lifecycle's sentinels, and
// keeps the API error in the chain (apierrors.IsNotFound still works).
//
//   - NotFound → lifecycle.ErrNotFound.
//   - A failed UID precondition → lifecycle.ErrUIDMismatch. A delete says
//     so with a Conflict; a patch whose metadata.uid differs from the
//     stored pod's is refused as Invalid or Conflict naming the uid.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: %w", lifecycle.ErrNotFound, err)
	case (apierrors.IsConflict(err) || apierrors.IsInvalid(err)) && mentionsUID(err):
		return fmt.Errorf("%w: %w", lifecycle.ErrUIDMismatch, err)
	}
	return err
}

func mentionsUID(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if d := status.Status().Details; d != nil {
			for _, c := range d.Causes {
				if c.Field == "metadata.uid" {
					return true
				}
			}
		}
	}
	return strings.Contains(strings.ToLower(err.Error()), "uid")
}
