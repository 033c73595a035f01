// Package state owns the host's local database: the facts about pods that
// the container runtime cannot tell after the host restarts.
//
// It keeps, in one bbolt file under the host's root directory
// (<rootDir>/state.db):
//
//   - pod statuses, keyed by namespace/name, with the pod's UID, its last
//     v1.PodStatus, whether that status is terminal and when it was written;
//   - pod history, keyed by UID: whether the pod finished (so that a terminal
//     pod stays terminal after a restart, even once its containers are gone)
//     and the last restart count of each container;
//   - the pods applied through the local API (apipods), and the record of a
//     graceful node shutdown (which pods it stopped, to start them again);
//   - the ConfigMaps and Secrets applied through the local API
//     (apiobjects, keyed Kind/namespace/name; the file is 0600);
//   - the volume manager's actual state (volumes), keyed by volume ID:
//     what is or may be staged and published, so that a restart cleans up
//     what was in flight (SaveVolumes, LoadVolumes).
//
// Store implements lifecycle.StatusSink, so the status manager writes to it
// like to any other sink; a pod must be registered with Track before the
// sink accepts statuses for it, as a pod must exist in the API server.
//
// A database that cannot be opened or fails its consistency check is never
// a reason to stop: Open moves the file aside (state.db.corrupt-<time>),
// logs an ERROR saying what is lost, starts from an empty database and says
// so through Store.Recovery, so the host can emit an event and rebuild its
// view from the runtime. A database locked by another process, a directory
// that cannot be written and a database written by a newer schema are
// errors: they need an operator, and moving the file would destroy data.
//
// Only host/node, the running agent, imports it.
package state
