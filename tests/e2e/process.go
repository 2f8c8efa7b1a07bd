package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// process is a child process under test: the real binary, or this test
// binary re-executed in a child role. Its stdout is kept as lines, its
// stderr whole; both are safe to read while it runs.
type process struct {
	tb     testing.TB
	name   string
	cmd    *exec.Cmd
	stdout *lineBuffer
	Stderr *lineBuffer

	Done    chan struct{} // closed once the process has exited
	WaitErr error         // set before done is closed
}

// StartProcess starts cmd with its output captured. On cleanup the process
// is killed if it still runs, and its stderr is logged if the test failed.
func StartProcess(tb testing.TB, name string, cmd *exec.Cmd) *process {
	tb.Helper()
	p := &process{
		tb:     tb,
		name:   name,
		cmd:    cmd,
		stdout: newLineBuffer(),
		Stderr: newLineBuffer(),
		Done:   make(chan struct{}),
	}
	cmd.Stdout, cmd.Stderr = p.stdout, p.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.WaitErr = cmd.Wait()
		close(p.Done)
	}()
	tb.Cleanup(func() {
		select {
		case <-p.Done:
		default:
			_ = cmd.Process.Kill()
			<-p.Done
		}
		if tb.Failed() {
			p.logStderr()
		}
	})
	return p
}

// TestExecutable returns a command that re-runs this test binary with env
// added to the environment, for TestMain to pick a child role from.
func TestExecutable(tb testing.TB, env ...string) *exec.Cmd {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatalf("os.Executable: %v", err)
	}
	// -test.run matches nothing: a child whose role TestMain does not
	// recognise runs no tests rather than all of them.
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// WaitLine waits up to timeout for a stdout line starting with prefix and
// returns it. It fails if the process exits first.
func (p *process) WaitLine(prefix string, timeout time.Duration) string {
	p.tb.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	seen := 0
	for {
		lines, changed := p.stdout.linesFrom(seen)
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		seen += len(lines)
		select {
		case <-changed:
		case <-p.Done:
			// Output copied before Wait returned is complete now.
			if lines, _ := p.stdout.linesFrom(seen); len(lines) > 0 {
				continue
			}
			p.tb.Fatalf("%s exited (%v) before printing %q", p.name, p.WaitErr, prefix)
		case <-timer.C:
			p.tb.Fatalf("%s printed no line starting with %q within %v", p.name, prefix, timeout)
		}
	}
}

// Kill sends SIGKILL, waits for the process to exit, and fails unless it
// was the kill that ended it.
func (p *process) Kill() {
	p.tb.Helper()
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.tb.Fatalf("kill %s: %v", p.name, err)
	}
	<-p.Done
	// ExitCode is -1 for a process ended by a signal.
	if st := p.cmd.ProcessState; st == nil || st.ExitCode() != -1 {
		p.tb.Fatalf("%s exited by itself before the kill: %v", p.name, p.WaitErr)
	}
}

// Lines returns every complete stdout line; a line cut short by the
// process dying is left out.
func (p *process) Lines() []string {
	lines, _ := p.stdout.linesFrom(0)
	return lines
}

func (p *process) logStderr() {
	const tail = 4 << 10
	s := p.Stderr.String()
	if len(s) > tail {
		s = "..." + s[len(s)-tail:]
	}
	if s != "" {
		p.tb.Logf("%s stderr:\n%s", p.name, s)
	}
}

// lineBuffer is an io.Writer that keeps what is written and tells waiters
// when a new line is complete.
type lineBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	lines   []string      // complete lines, without the newline
	partial []byte        // bytes after the last newline
	changed chan struct{} // closed and replaced when lines grows
}

func newLineBuffer() *lineBuffer {
	return &lineBuffer{changed: make(chan struct{})}
}

func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	b.partial = append(b.partial, p...)
	grew := false
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		b.lines = append(b.lines, string(b.partial[:i]))
		b.partial = b.partial[i+1:]
		grew = true
	}
	if grew {
		b.partial = append([]byte(nil), b.partial...) // drop the consumed prefix
		close(b.changed)
		b.changed = make(chan struct{})
	}
	return len(p), nil
}

// linesFrom returns the complete lines from index i on, and a channel
// closed when more arrive.
func (b *lineBuffer) linesFrom(i int) ([]string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i > len(b.lines) {
		panic(fmt.Sprintf("lineBuffer: line %d of %d", i, len(b.lines)))
	}
	return append([]string(nil), b.lines[i:]...), b.changed
}

// String returns everything written.
func (b *lineBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
