package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
)

func noEnv(string) string { return "" }

// TestHelp: httpkv --help (and -h, help) succeeds and lists every
// command with its summary and every server flag; a command's --help
// succeeds and prints that command's usage.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "-help", "help"} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{arg}, noEnv, &stdout, &stderr); err != nil {
			t.Fatalf("httpkv %s = %v, want success", arg, err)
		}
		out := stdout.String()
		for _, c := range commands() {
			if !strings.Contains(out, "  "+c.name+" ") || !strings.Contains(out, c.summary) {
				t.Errorf("httpkv %s does not list the command %q with its summary %q:\n%s", arg, c.name, c.summary, out)
			}
		}
		for _, flag := range []string{"-listen", "-data-dir", "-unsafe-no-fsync", "HTTPKV_DATA_DIR", "Ctrl-C"} {
			if !strings.Contains(out, flag) {
				t.Errorf("httpkv %s does not mention %s:\n%s", arg, flag, out)
			}
		}
	}
	// Flags before --help: the usage still, on stderr, and success.
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--help"}, noEnv, io.Discard, &stderr); err != nil ||
		!strings.Contains(stderr.String(), "Commands:") {
		t.Errorf("httpkv --listen 127.0.0.1:0 --help = %v with stderr %q, want the usage and success", err, stderr.String())
	}

	wantUsage := map[string]string{
		"health":   "Usage: httpkv health",
		"snapshot": "Usage: httpkv snapshot",
		"migrate":  "Usage: httpkv migrate",
		"bench":    "usage: httpkv bench",
		"help":     "Commands:",
	}
	for _, c := range cli.Commands() {
		wantUsage[c.Name] = "Usage:\n  httpkv " + c.Name // cli's own tests check the rest
	}
	for _, c := range commands() {
		want, ok := wantUsage[c.name]
		if !ok {
			t.Errorf("command %q: this test does not know its usage; add it", c.name)
			continue
		}
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{c.name, "--help"}, noEnv, &stdout, &stderr)
		if out := stdout.String() + stderr.String(); err != nil || !strings.Contains(out, want) {
			t.Errorf("httpkv %s --help = %v with output %q, want success and %q", c.name, err, out, want)
		}
	}
}

// TestHelpCommand: httpkv help COMMAND prints COMMAND's help.
func TestHelpCommand(t *testing.T) {
	for _, args := range [][]string{{"help", "get"}, {"help", "lease", "grant"}, {"help", "health"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, noEnv, &stdout, &stderr)
		want := "Usage: httpkv health"
		if args[1] != "health" {
			want = "Usage:\n  httpkv " + strings.Join(args[1:], " ")
		}
		if out := stdout.String() + stderr.String(); err != nil || !strings.Contains(out, want) {
			t.Errorf("httpkv %s = %v with %q, want %q", strings.Join(args, " "), err, out, want)
		}
	}
}

// TestBadArguments: a flag httpkv does not know, a command it does not
// know, or a stray argument of health, fails with a usage error (exit
// status 2) that says what is wrong and suggests the nearest flag or
// command; the server's flags included.
func TestBadArguments(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "unknown flag --nope\nRun \"httpkv --help\""},
		{[]string{"--lisen", "127.0.0.1:0"}, "unknown flag --lisen (did you mean --listen?)"},
		{[]string{"--data-dri", "x"}, "(did you mean --data-dir?)"},
		{[]string{"gte", "a"}, `unknown command "gte" (did you mean "get"?)`},
		{[]string{"wacth"}, `(did you mean "watch"?)`},
		{[]string{"health", "--nope"}, "health: unknown flag --nope"},
		{[]string{"health", "--ulr", "x"}, "(did you mean --url?)"},
		{[]string{"snapshot", "status", "--jsn", "f"}, "(did you mean --json?)"},
	} {
		err := run(context.Background(), tt.args, noEnv, io.Discard, io.Discard)
		var stderr bytes.Buffer
		if status := cli.Report(err, &stderr); status != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("httpkv %s: exit status %d, stderr %q; want 2 and %q", strings.Join(tt.args, " "), status, stderr.String(), tt.want)
		}
	}
	// A stray argument of health is an error, with its usage.
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"health", "extra"}, noEnv, io.Discard, &stderr); err == nil || !strings.Contains(stderr.String(), "Usage") {
		t.Errorf("httpkv health extra = %v with stderr %q, want a failure and the usage", err, stderr.String())
	}
}
