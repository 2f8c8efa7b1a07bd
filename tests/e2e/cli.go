package e2e

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
