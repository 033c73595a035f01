package scsi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Runner runs a node command and returns its standard output. A command
// that exits non-zero returns an *ExitError.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExitError is a command that ran and exited non-zero.
type ExitError struct {
	Command string
	Code    int
	Output  string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("%s exited with code %d: %s", e.Command, e.Code, strings.TrimSpace(e.Output))
}

// ExitCode returns the exit code of err when it is an *ExitError, else -1.
func ExitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return -1
}

// Exec runs commands with os/exec. Arguments are not logged: iscsiadm
// takes CHAP secrets as arguments.
type Exec struct{}

// Run runs name with args.
func (Exec) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.Bytes(), &ExitError{Command: name, Code: ee.ExitCode(), Output: stderr.String() + stdout.String()}
	}
	if err != nil {
		return nil, fmt.Errorf("running %s: %w", name, err)
	}
	return stdout.Bytes(), nil
}
