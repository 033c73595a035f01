// Package registryauth turns a pod's image pull secrets into the
// credentials for one image's registry, as the kubelet does
// (pkg/credentialprovider): a Secret of type kubernetes.io/dockerconfigjson
// (key .dockerconfigjson, {"auths": {KEY: ENTRY}}) or kubernetes.io/dockercfg
// (key .dockercfg, {KEY: ENTRY}) gives, per registry key, a username and
// password (an entry's "auth", base64 of user:password, wins over them).
// A Secret of another type, or without its key, adds nothing.
//
// Keys match an image's repository (its name without tag or digest,
// docker.io names normalised to docker.io/library/…) as the kubelet
// matches them: the same number of host labels, each label a glob
// (*.example.com), the same port, and the key's path a prefix of the
// repository's path; an "http(s)://" scheme and a "/v1/" or "/v2/" path
// prefix are ignored. Keys are tried longest-sorting first, and a key of
// index.docker.io serves any Docker Hub image no other key matched.
//
// Parsers take bytes and never panic on any input (FuzzParse); an
// unreadable Secret is an error naming it and its key, never one that
// shows a credential. The package reads no Secret itself: the runtime
// manager (host/runtimemanager), its only importer, hands it the pod's.
package registryauth
