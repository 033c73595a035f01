// Package expansion owns the kubelet's $(VAR) expansion of a container's
// fields: command, args and env values (an undefined variable stays as
// written) and a volumeMount's subPathExpr (every variable it names must be
// defined and not empty). The syntax is the kubelet's: $(NAME) is a
// reference, $$ is a literal $, and any other $ (one at the end, one
// before anything but ( or $, an unterminated "$(") stays as written.
//
// It computes only. The runtime manager (command, args, env) and the host
// volumes (host/volumemanager/hostvolumes, subPathExpr) import it; it
// imports only the standard library.
package expansion
