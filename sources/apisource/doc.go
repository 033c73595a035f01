// Package apisource owns the "api" source: the pods, ConfigMaps and
// Secrets that operators apply and delete through the host's local API. It keeps them in memory, writes
// every change through a [Persister] before it takes effect (the host backs
// it with its bbolt store), and reports the complete set as
// sources.Snapshot values, newest only, like the manifest source.
//
// [Source.Apply] decodes one Pod (JSON or YAML) with the manifest
// directory's strict decoder, defaults and validates it, and creates or
// updates it: a new pod gets a random UID from the injected generator, an
// update keeps the pod's UID and creation time. A request that does not
// decode or validate changes nothing and fails with an [*InvalidError]
// whose tree holds one *field.Error per problem; it is also reported in the
// next snapshot's Errors, so the host can show it, until the same name is
// applied successfully or deleted.
//
// [Source.Delete] marks a pod for deletion: deletionTimestamp and
// deletionGracePeriodSeconds are set and the pod stays desired so the pod
// worker terminates it gracefully; the host calls [Source.Remove] once the
// pod has finished. A forced delete uses grace 0 and removes the pod from
// the desired set at once; the pod worker then kills what still runs.
//
// [Source.ApplyObject] and [Source.DeleteObject] do the same for a
// ConfigMap or Secret (objects.go): decoded and validated as the manifest
// directory's, written through the Persister, published in the snapshot
// for the pods that are not the API server's.
//
// The host, cmd/host and tests may import this package; it imports sources
// and sources/manifest, never lifecycle/ or host/.
package apisource
