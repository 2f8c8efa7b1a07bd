package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

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
	ctx, cancel := context.WithTimeout(context.Background(), e2e.CLITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2e.ServerBinary(tb), args...)
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
	doc, _, err := e2e.LoadAPIDoc()
	if err != nil {
		tb.Fatal(err)
	}
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			tb.Fatalf("%s -o json printed %q: not a JSON object a line: %v", what, out, err)
		}
		if err := e2e.MatchSchema(doc, schema, []byte(line)); err != nil {
			tb.Fatalf("%s -o json printed %s: not the API's %s: %v", what, line, schema, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// startCLI starts httpkv args against the server at url. The process
// is killed at the end of the test if it still runs.
func startCLI(tb testing.TB, url string, args ...string) *e2e.CLIProc {
	tb.Helper()
	cmd := exec.Command(e2e.ServerBinary(tb), args...)
	cmd.Env = cliEnv(url)
	return e2e.StartLines(tb, cmd, false)
}
