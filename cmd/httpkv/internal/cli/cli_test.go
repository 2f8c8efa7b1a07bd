package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write docs/cli.md again from the commands' help")

// referenceFile is the reference Reference writes.
var referenceFile = filepath.Join("..", "..", "..", "..", "docs", "cli.md")

// TestReference: docs/cli.md is what the commands' help says; -update
// writes it again.
func TestReference(t *testing.T) {
	var b bytes.Buffer
	Reference(&b)
	if *update {
		if err := os.WriteFile(referenceFile, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Fatalf("docs/cli.md differs from the commands' help: run go test ./cmd/httpkv/internal/cli -run TestReference -update")
	}
}

// each calls f with every command that runs (not a group) and its path.
func each(f func(path string, c *command)) {
	for _, c := range commands() {
		if c.subs == nil {
			f(c.name, c)
		}
		for _, s := range c.subs {
			f(c.name+" "+s.name, s)
		}
	}
}

func env(stdout, stderr *bytes.Buffer) Env {
	return Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" }}
}

// TestHelp: every command has a summary, help and examples, and --help
// (before or after arguments) prints them and succeeds; the examples use
// only flags the command has.
func TestHelp(t *testing.T) {
	flagWord := regexp.MustCompile(`(?:^|\s)--?([a-z][a-z-]*)`)
	each(func(path string, c *command) {
		if c.summary == "" || c.help == "" || c.examples == "" {
			t.Errorf("httpkv %s: no summary, help or examples", path)
		}
		for _, args := range [][]string{{"--help"}, {"a", "-h"}} {
			var stdout, stderr bytes.Buffer
			err := Run(context.Background(), append(strings.Fields(path), args...), env(&stdout, &stderr))
			out := stdout.String()
			if err != nil || !strings.Contains(out, "Usage:\n  httpkv "+path) || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--url URL") {
				t.Errorf("httpkv %s %s = %v with %q, want its help and success", path, strings.Join(args, " "), err, out)
			}
		}
		fs := flag.NewFlagSet(path, flag.ContinueOnError)
		c.setup(fs)
		var common commonFlags
		common.add(fs)
		for _, line := range strings.Split(c.examples, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") || !strings.Contains(line, "httpkv "+path) {
				continue
			}
			// The flags of the httpkv command of the line, up to "--" or
			// the end of the command.
			cmd := line[strings.Index(line, "httpkv "+path):]
			cmd, _, _ = strings.Cut(cmd, " -- ")
			cmd, _, _ = strings.Cut(cmd, "|")
			cmd, _, _ = strings.Cut(cmd, ")")
			cmd, _, _ = strings.Cut(cmd, "<")
			cmd, _, _ = strings.Cut(cmd, "#")
			for _, m := range flagWord.FindAllStringSubmatch(cmd, -1) {
				if fs.Lookup(m[1]) == nil {
					t.Errorf("httpkv %s: the example %q uses --%s, which the command does not have", path, line, m[1])
				}
			}
		}
	})
}

// TestUsageErrors: what does not parse is a *UsageError (exit status
// 2) that says what is wrong, with the nearest flag or command.
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "a", "--prefx"}, "unknown flag --prefx (did you mean --prefix?)"},
		{[]string{"get"}, "missing arguments; usage: httpkv get KEY"},
		{[]string{"get", "a", "b"}, "too many arguments"},
		{[]string{"gte", "a"}, `unknown command "gte" (did you mean "get"?)`},
		{[]string{"lease", "grnt", "60"}, `lease: unknown command "grnt" (did you mean "grant"?)`},
		{[]string{"lease"}, "which lease command?"},
		{[]string{"lease", "grant", "soon"}, `TTL must be a whole number of at least 1, not "soon"`},
		{[]string{"get", "a", "--rev", "x"}, `invalid value "x" for flag --rev`},
		{[]string{"get", "a", "-o", "yaml"}, `-o must be simple, json or value, not "yaml"`},
		{[]string{"get", "a", "--prefix", "--from-key"}, "go one at a time"},
		{[]string{"put", "k", "-5"}, `-5 is read as a flag: a negative number is an argument after "--"`},
		{[]string{"put", "k", "v", "--lease", "1", "--ttl", "5"}, "--lease and --ttl go one at a time"},
		{[]string{"restore", "k"}, "--rev R is required"},
		{[]string{"get", "a", "--user", "alice"}, "no password, and no terminal to ask for it on"},
		{[]string{"get", "a", "--url", "ftp://x"}, "must be http:// or https://"},
	} {
		var stdout, stderr bytes.Buffer
		err := Run(context.Background(), tt.args, env(&stdout, &stderr))
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) || Report(err, &stderr) != 2 {
			t.Errorf("httpkv %s = %v, want a usage error saying %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}

// TestLeading: the common flags may come before a data command's name.
func TestLeading(t *testing.T) {
	for _, tt := range []struct {
		args, want []string
		ok         bool
	}{
		{[]string{"-o", "json", "get", "a"}, []string{"get", "-o", "json", "a"}, true},
		{[]string{"--url=U", "--user", "u:p", "lease", "list"}, []string{"lease", "--url=U", "--user", "u:p", "list"}, true},
		{[]string{"get", "a"}, []string{"get", "a"}, false},
		{[]string{"--listen", "get"}, []string{"--listen", "get"}, false},
		{[]string{"-o", "json", "serve"}, []string{"-o", "json", "serve"}, false},
	} {
		got, ok := Leading(tt.args)
		if ok != tt.ok || strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("Leading(%q) = %q, %v; want %q, %v", tt.args, got, ok, tt.want, tt.ok)
		}
	}
}

// TestParseArgs: flags before, between and after arguments; after "--"
// everything is an argument.
func TestParseArgs(t *testing.T) {
	for _, tt := range []struct {
		args, want []string
		prefix     bool
		url        string
	}{
		{[]string{"a/", "--prefix", "--url", "U"}, []string{"a/"}, true, "U"},
		{[]string{"--prefix", "a/", "b"}, []string{"a/", "b"}, true, ""},
		{[]string{"--url=U", "a", "--", "--prefix", "-x"}, []string{"a", "--prefix", "-x"}, false, "U"},
		{[]string{"--", "-5"}, []string{"-5"}, false, ""},
		{[]string{"lock", "--", "sh", "-c", "echo --prefix"}, []string{"lock", "sh", "-c", "echo --prefix"}, false, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		prefix := fs.Bool("prefix", false, "")
		url := fs.String("url", "", "")
		got, err := parseArgs(fs, tt.args)
		if err != nil || strings.Join(got, "|") != strings.Join(tt.want, "|") || *prefix != tt.prefix || *url != tt.url {
			t.Errorf("parseArgs(%q) = %q, %v with prefix %v url %q; want %q, prefix %v url %q",
				tt.args, got, err, *prefix, *url, tt.want, tt.prefix, tt.url)
		}
	}
}
