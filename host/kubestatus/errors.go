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
//   - A failed UID precondition → lifecycle.ErrUIDMismatch. The API server
//     refuses a delete with a Conflict ("the UID in the precondition … does
//     not match the UID in record"), and a status patch whose metadata.uid
//     differs from the stored pod's as Invalid with the cause field
//     metadata.uid ("field is immutable").
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: %w", lifecycle.ErrNotFound, err)
	case apierrors.IsInvalid(err) && invalidUID(err),
		apierrors.IsConflict(err) && strings.Contains(strings.ToLower(err.Error()), "uid"):
		return fmt.Errorf("%w: %w", lifecycle.ErrUIDMismatch, err)
	}
	return err
}

func invalidUID(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}
