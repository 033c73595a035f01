// Package kubestatus owns the API server as a status sink: it implements
// lifecycle.StatusSink for pods that came from a Kubernetes API server, so
// that the status manager reports their status there and deletes them once
// they are finished on the node.
//
//   - Get reads the pod from the API server itself, not from an informer
//     cache: the status manager merges the API's status with its own and
//     skips the write when they are equal, so a stale read could hide a
//     change (a condition that flipped and flipped back).
//   - Put patches the pod's status subresource with a strategic merge patch
//     from the status Get returned to the new one (fields that went away
//     are removed; Get keeps that status until the Put, a Delete or the
//     Forget that ends the status manager's sync, so nothing of a pod is
//     kept between two syncs), and with the pod UID in the patch as the
//     precondition:
//     a pod recreated under the same name with another UID is never
//     written, and the error wraps lifecycle.ErrUIDMismatch.
//   - Container IDs are "<runtime type>://<id>" in the API server, as a
//     kubelet writes them (containerd://3f…, the type being the runtime
//     plugin's name from its Version answer), and the runtime's own IDs
//     everywhere in the node: Put sets the type on what it writes, Get
//     strips it from what it returns, so the status manager compares like
//     with like. The node's lookups by ID (state.db, finished pods,
//     probes, the local API and CLI) never see the type. Put fails while
//     the type is unknown rather than write IDs of both forms.
//   - Delete deletes the pod with grace period 0 and a UID precondition;
//     a pod already gone is not an error, another pod under the name is
//     lifecycle.ErrUIDMismatch. The status manager calls it only once the
//     pod is finished on the node and every container status is terminal.
//   - Reject fails a pod the node will not run (it does not validate, its
//     name is held by another source): phase Failed with a reason and a
//     message, and deletes it once the API server marked it for deletion,
//     since nothing of it ever ran.
//
// Errors of the API server are wrapped once, here, into the lifecycle's
// sentinels. Only host/node imports this package; it imports lifecycle (for
// the sentinels), sources/kubesource (the container-ID forms) and
// client-go.
package kubestatus
