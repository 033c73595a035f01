package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"

	"github.com/podhost/podhost/host/localapi"
)

// streamFlags are exec's and attach's: -i, -t and -c.
type streamFlags struct {
	stdin, tty bool
	container  string
}

func (f *streamFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVarP(&f.stdin, "stdin", "i", false, "pass standard input to the container")
	fl.BoolVarP(&f.tty, "tty", "t", false, "allocate a terminal; with -i on a terminal, it is put in raw mode and its size follows")
	fl.StringVarP(&f.container, "container", "c", "", "the container (default: the pod's "+localapi.DefaultContainerAnnotation+" annotation, else its first container)")
}

func newExecCommand() *cobra.Command {
	var api apiFlags
	var sf streamFlags
	cmd := &cobra.Command{
		Use:   "exec [-i] [-t] NAMESPACE/NAME [-c CONTAINER] -- COMMAND [ARG...]",
		Short: "Run a command in a container of a pod",
		Long: "Run a command in a running container, as kubectl exec does: its standard output and\n" +
			"error come back apart (merged with -t), -i passes standard input, and the command's exit\n" +
			"code is podhost's exit status.",
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return errors.New("give the pod, then -- and the command: podhost exec NAMESPACE/NAME -- COMMAND")
			}
			return runStream(cmd, &api, &sf, args[0], args[1:])
		},
	}
	api.register(cmd)
	sf.register(cmd)
	completePods(cmd, &api, "")
	return cmd
}

func newAttachCommand() *cobra.Command {
	var api apiFlags
	var sf streamFlags
	cmd := &cobra.Command{
		Use:   "attach [-i] [-t] NAMESPACE/NAME [-c CONTAINER]",
		Short: "Attach to the streams of a running container",
		Long: "Attach to the standard output and error of a running container, and with -i to its\n" +
			"standard input (the container must have stdin: true, and tty: true for -t), until it\n" +
			"exits or podhost is interrupted.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStream(cmd, &api, &sf, args[0], nil)
		},
	}
	api.register(cmd)
	sf.register(cmd)
	completePods(cmd, &api, "")
	return cmd
}

// runStream runs an exec (cmd not empty) or an attach, with the exit code
// of the command as the exit status.
func runStream(cmd *cobra.Command, api *apiFlags, sf *streamFlags, pod string, command []string) error {
	ns, name, err := splitPodName(pod)
	if err != nil {
		return err
	}
	c, err := api.client()
	if err != nil {
		return err
	}
	o := localapi.StreamOptions{Container: sf.container, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(), TTY: sf.tty}
	if sf.stdin {
		o.Stdin = cmd.InOrStdin()
	}
	if sf.tty && sf.stdin {
		if f, ok := o.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			restore, err := rawTerminal(f)
			if err != nil {
				return err
			}
			defer restore()
			o.Resize = newSizeQueue(f)
		}
	}
	if command != nil {
		err = c.Exec(cmd.Context(), ns, name, command, o)
	} else {
		err = c.Attach(cmd.Context(), ns, name, o)
	}
	var code exec.ExitError
	if errors.As(err, &code) && code.Exited() {
		return exitError{code: code.ExitStatus()}
	}
	return err
}

// rawTerminal puts f in raw mode and returns what restores it.
func rawTerminal(f *os.File) (func(), error) {
	state, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("putting the terminal in raw mode: %w", err)
	}
	return func() { _ = term.Restore(int(f.Fd()), state) }, nil
}

// sizeQueue sends the terminal's size first and again on every SIGWINCH.
type sizeQueue struct {
	f   *os.File
	sig chan os.Signal
	// sent is false until the first size went.
	sent bool
}

func newSizeQueue(f *os.File) *sizeQueue {
	q := &sizeQueue{f: f, sig: make(chan os.Signal, 1)}
	signal.Notify(q.sig, syscall.SIGWINCH)
	return q
}

// Next blocks until the size changes; the first call answers at once.
func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	if q.sent {
		if _, ok := <-q.sig; !ok {
			return nil
		}
	}
	q.sent = true
	w, h, err := term.GetSize(int(q.f.Fd()))
	if err != nil {
		return nil
	}
	return &remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}
}
