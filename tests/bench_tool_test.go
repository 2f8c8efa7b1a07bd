package tests

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestBenchCommand: `httpkv bench` runs the load tool built beside the
// server's binary with the same arguments, its report on httpkv's
// output; without the tool it fails saying how to build it. The tool
// itself is a binary of its own: the server's does not carry it
// (TestLayers).
func TestBenchCommand(t *testing.T) {
	t.Parallel()
	httpkv := e2e.ServerBinary(t)
	benchBinary(t) // beside httpkv
	s := e2e.StartServer(t)

	run := func(bin string, env []string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		for errors.Is(err, syscall.ETXTBSY) && ctx.Err() == nil {
			// A copied binary (placeBinary) until a process forked while
			// it was written has exec'd.
			time.Sleep(10 * time.Millisecond)
			out.Reset()
			cmd = exec.CommandContext(ctx, bin, args...)
			cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), env...), &out, &out
			err = cmd.Run()
		}
		return out.String(), err
	}

	out, err := run(httpkv, nil, "bench", "--help")
	if err != nil || !strings.Contains(out, "usage: httpkv-bench [flags]") {
		t.Errorf("httpkv bench --help = %v with output %q, want success and the tool's usage", err, out)
	}
	out, err = run(httpkv, nil, "bench", "--target", s.URL, "--workload", "put", "--clients", "2", "--requests", "20", "--prefix", "bench/")
	// The report's row: workload, requests, errors, ...
	if err != nil || !regexp.MustCompile(`(?m)^\s*put\s+20\s+0\s`).MatchString(out) {
		t.Errorf("httpkv bench --workload put --requests 20 = %v with output %q, want success and a row of 20 puts without errors", err, out)
	}
	var l client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=bench/&prefix=true&count_only=true", nil).Ok(t, http.StatusOK, &l)
	if l.Count == 0 {
		t.Errorf("after httpkv bench, GET /v1/kv?key=bench/&prefix=true counts %d keys, want the tool's", l.Count)
	}
	out, err = run(httpkv, nil, "bench", "--workload", "nope")
	if err == nil || !strings.Contains(out, "httpkv-bench") {
		t.Errorf("httpkv bench --workload nope = %v with output %q, want the tool's failure", err, out)
	}

	// The server's binary alone, with nothing on PATH.
	alone := filepath.Join(t.TempDir(), "httpkv")
	placeBinary(t, httpkv, alone)
	out, err = run(alone, []string{"PATH=" + t.TempDir()}, "bench", "--workload", "put")
	if err == nil || !strings.Contains(out, "go build -o") || !strings.Contains(out, "./cmd/httpkv-bench") {
		t.Errorf("httpkv bench without the tool = %v with output %q, want a failure saying how to build it", err, out)
	}
}

// placeBinary puts the executable from at to: a hard link where it can.
// A copy leaves, while it is written, a descriptor open for writing that
// a process forked meanwhile (another test starting a server) holds until
// it execs; exec'ing the copy then fails with "text file busy"
// (golang.org/issue/22315).
func placeBinary(tb testing.TB, from, to string) {
	tb.Helper()
	if os.Link(from, to) == nil {
		return
	}
	b, err := os.ReadFile(from)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o700); err != nil {
		tb.Fatal(err)
	}
}
