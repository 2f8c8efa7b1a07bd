package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The data commands are tested as people and scripts use them: the
// binary of this checkout run as a process, against a server started
// for the test.

// cliTimeout bounds one run of a command that ends by itself.
const cliTimeout = time.Minute

// cliResult is what a run of the httpkv binary left.
type cliResult struct {
	args           []string
	stdout, stderr string
	status         int
}

func (r cliResult) String() string {
	return "httpkv " + strings.Join(r.args, " ")
}

// cliEnv is the environment of the commands: the test's, without the
// settings that would point them elsewhere, with url as HTTPKV_URL.
func cliEnv(url string, extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "HTTPKV_URL=") || strings.HasPrefix(kv, "HTTPKV_TOKEN=") || strings.HasPrefix(kv, "HTTPKV_USER=")
	})
	env = append(env, "HTTPKV_URL="+url, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return append(env, extra...)
}

// runCLI runs httpkv args against the server at url with stdin, and
// waits for it to end.
func runCLI(tb testing.TB, url, stdin string, args ...string) cliResult {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, serverBinary(tb), args...)
	cmd.Env = cliEnv(url)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cliResult{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		r.status = ee.ExitCode()
	default:
		tb.Fatalf("%s: %v; stderr:\n%s", r, err, r.stderr)
	}
	if strings.Contains(r.stderr, "WARNING: DATA RACE") {
		tb.Errorf("%s reported a data race:\n%s", r, r.stderr)
	}
	return r
}

// ok runs a command that must succeed, and returns its stdout.
func cliOK(tb testing.TB, url, stdin string, args ...string) string {
	tb.Helper()
	r := runCLI(tb, url, stdin, args...)
	if r.status != 0 {
		tb.Fatalf("%s exited %d, want 0; stderr:\n%s", r, r.status, r.stderr)
	}
	return r.stdout
}

// cliFails runs a command that must exit with status, saying want on
// stderr.
func cliFails(tb testing.TB, url string, status int, want string, args ...string) cliResult {
	tb.Helper()
	r := runCLI(tb, url, "", args...)
	if r.status != status || !strings.Contains(r.stderr, want) {
		tb.Fatalf("%s exited %d with stderr %q; want %d and %q", r, r.status, r.stderr, status, want)
	}
	if r.stdout != "" {
		tb.Errorf("%s failed, yet printed %q on stdout", r, r.stdout)
	}
	return r
}

// jsonLines decodes the lines of a -o json output, checking that each
// is a JSON object matching the schema of the API's document.
func jsonLines(tb testing.TB, what, out, schema string) []map[string]any {
	tb.Helper()
	doc, _, err := loadAPIDoc()
	if err != nil {
		tb.Fatal(err)
	}
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			tb.Fatalf("%s -o json printed %q: not a JSON object a line: %v", what, out, err)
		}
		if err := matchSchema(doc, schema, []byte(line)); err != nil {
			tb.Fatalf("%s -o json printed %s: not the API's %s: %v", what, line, schema, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// cliProc is a command that runs until told to stop (a watch, a lock
// held until Ctrl-C), its stdout read a line at a time.
type cliProc struct {
	*process
	stdin io.WriteCloser // with startLines's withStdin
	read  int            // how many lines next returned
}

// startCLI starts httpkv args against the server at url. The process
// is killed at the end of the test if it still runs.
func startCLI(tb testing.TB, url string, args ...string) *cliProc {
	tb.Helper()
	cmd := exec.Command(serverBinary(tb), args...)
	cmd.Env = cliEnv(url)
	return startLines(tb, cmd, false)
}

// startLines starts cmd; with withStdin, p.stdin writes to its stdin.
// The test fails if it reports a data race.
func startLines(tb testing.TB, cmd *exec.Cmd, withStdin bool) *cliProc {
	tb.Helper()
	p := &cliProc{}
	if withStdin {
		var err error
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			tb.Fatal(err)
		}
	}
	p.process = startProcess(tb, filepath.Base(cmd.Path)+" "+strings.Join(cmd.Args[1:], " "), cmd)
	tb.Cleanup(func() {
		if strings.Contains(p.stderr.String(), "WARNING: DATA RACE") {
			tb.Errorf("%s reported a data race:\n%s", p.name, p.stderr)
		}
	})
	return p
}

// next returns the next line the command prints, failing the test if it
// ends or prints nothing more within cliTimeout.
func (p *cliProc) next() string {
	p.tb.Helper()
	timer := time.NewTimer(cliTimeout)
	defer timer.Stop()
	for {
		lines, changed := p.stdout.linesFrom(p.read)
		if len(lines) > 0 {
			p.read++
			return lines[0]
		}
		select {
		case <-changed:
		case <-p.done:
			if lines, _ := p.stdout.linesFrom(p.read); len(lines) > 0 {
				continue
			}
			p.tb.Fatalf("%s ended (%v) before printing another line; stderr:\n%s", p.name, p.waitErr, p.stderr)
		case <-timer.C:
			p.tb.Fatalf("%s printed nothing more within %v; stderr:\n%s", p.name, cliTimeout, p.stderr)
		}
	}
}

// signal sends sig to the command.
func (p *cliProc) signal(sig syscall.Signal) {
	p.tb.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.tb.Fatalf("%s: %v", p.name, err)
	}
}

// wait waits for the command to end and returns its exit status, -1
// for a signal.
func (p *cliProc) wait() int {
	p.tb.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(cliTimeout):
		p.tb.Fatalf("%s did not end within %v; stderr:\n%s", p.name, cliTimeout, p.stderr)
		return 0
	}
}

// rest returns what the command printed that next has not returned.
func (p *cliProc) rest() []string {
	lines, _ := p.stdout.linesFrom(p.read)
	p.read += len(lines)
	return lines
}
