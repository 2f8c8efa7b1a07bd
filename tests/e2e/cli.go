package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/snapshot"
)

// The data commands are tested as people and scripts use them: the
// binary of this checkout run as a process, against a server started
// for the test.

// CLITimeout bounds one run of a command that ends by itself.
const CLITimeout = time.Minute

// CLIProc is a command that runs until told to stop (a watch, a lock
// held until Ctrl-C), its stdout read a line at a time.
type CLIProc struct {
	*process
	Stdin io.WriteCloser // with StartLines's withStdin
	read  int            // how many lines next returned
}

// StartLines starts cmd; with withStdin, p.stdin writes to its stdin.
// The test fails if it reports a data race.
func StartLines(tb testing.TB, cmd *exec.Cmd, withStdin bool) *CLIProc {
	tb.Helper()
	p := &CLIProc{}
	if withStdin {
		var err error
		if p.Stdin, err = cmd.StdinPipe(); err != nil {
			tb.Fatal(err)
		}
	}
	p.process = StartProcess(tb, filepath.Base(cmd.Path)+" "+strings.Join(cmd.Args[1:], " "), cmd)
	tb.Cleanup(func() {
		if strings.Contains(p.Stderr.String(), "WARNING: DATA RACE") {
			tb.Errorf("%s reported a data race:\n%s", p.name, p.Stderr)
		}
	})
	return p
}

// Next returns the next line the command prints, failing the test if it
// ends or prints nothing more within CLITimeout.
func (p *CLIProc) Next() string {
	p.tb.Helper()
	timer := time.NewTimer(CLITimeout)
	defer timer.Stop()
	for {
		lines, changed := p.stdout.linesFrom(p.read)
		if len(lines) > 0 {
			p.read++
			return lines[0]
		}
		select {
		case <-changed:
		case <-p.Done:
			if lines, _ := p.stdout.linesFrom(p.read); len(lines) > 0 {
				continue
			}
			p.tb.Fatalf("%s ended (%v) before printing another line; stderr:\n%s", p.name, p.WaitErr, p.Stderr)
		case <-timer.C:
			p.tb.Fatalf("%s printed nothing more within %v; stderr:\n%s", p.name, CLITimeout, p.Stderr)
		}
	}
}

// Signal sends sig to the command.
func (p *CLIProc) Signal(sig syscall.Signal) {
	p.tb.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.tb.Fatalf("%s: %v", p.name, err)
	}
}

// Wait waits for the command to end and returns its exit status, -1
// for a signal.
func (p *CLIProc) Wait() int {
	p.tb.Helper()
	select {
	case <-p.Done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(CLITimeout):
		p.tb.Fatalf("%s did not end within %v; stderr:\n%s", p.name, CLITimeout, p.Stderr)
		return 0
	}
}

// Rest returns what the command printed that next has not returned.
func (p *CLIProc) Rest() []string {
	lines, _ := p.stdout.linesFrom(p.read)
	p.read += len(lines)
	return lines
}

// commandTimeout bounds one run of an httpkv subcommand.
const commandTimeout = 2 * time.Minute

// RunHTTPKV runs the httpkv binary with args (and env added to this
// process's environment) and returns its stdout and stderr, and its
// error when it did not exit 0.
func RunHTTPKV(tb testing.TB, env []string, args ...string) (stdout, stderr string, err error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, ServerBinary(tb), args...)
	cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if strings.Contains(errOut.String(), "WARNING: DATA RACE") {
		tb.Errorf("httpkv %s reported a data race:\n%s", strings.Join(args, " "), errOut.String())
	}
	return out.String(), errOut.String(), err
}

// MustRunHTTPKV is RunHTTPKV that fails unless the command succeeds.
func MustRunHTTPKV(tb testing.TB, env []string, args ...string) string {
	tb.Helper()
	stdout, stderr, err := RunHTTPKV(tb, env, args...)
	if err != nil {
		tb.Fatalf("httpkv %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout
}

// SnapshotStatus returns what `httpkv snapshot status --json` says of
// file.
func SnapshotStatus(tb testing.TB, file string) snapshot.Info {
	tb.Helper()
	out := MustRunHTTPKV(tb, nil, "snapshot", "status", "--json", file)
	var info snapshot.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		tb.Fatalf("httpkv snapshot status --json %s = %q: %v", file, out, err)
	}
	return info
}
