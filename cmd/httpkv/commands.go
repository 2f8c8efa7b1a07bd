package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
)

// command is a subcommand of httpkv: `httpkv NAME ...`.
type command struct {
	name    string
	summary string // one line for the usage
	run     func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
}

// commands returns httpkv's subcommands, in the order the usage lists
// them: those of the server, then the data commands (package cli).
// With none of them named, httpkv serves.
func commands() []command {
	cs := serverCommands()
	for _, s := range cli.Commands() {
		cs = append(cs, dataCommand(s))
	}
	return cs
}

// commandNames lists the subcommands' names.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// dataCommand is a data command: a client of a running server.
func dataCommand(s cli.Summary) command {
	return command{s.Name, s.Summary, func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
		return cli.Run(ctx, append([]string{s.Name}, args...), terminalEnv(getenv, stdout, stderr))
	}}
}

// serverCommands are the subcommands that are not clients of the API's
// data: checks, backups, migration, load.
func serverCommands() []command {
	return []command{
		{"health", "check a running server: exits 0 when its /health answers 200",
			func(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
				return runHealth(ctx, args, stdout, stderr)
			}},
		{"snapshot", "save, check and restore backups (snapshot save, status, restore)", runSnapshot},
		{"migrate", "load a snapshot of the embedded store into an etcd cluster, for --backend etcd", runMigrate},
		{"bench", "load a server (httpkv or etcd) and report throughput and latency: runs " + benchTool,
			func(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
				return runBench(ctx, args, stdout, stderr)
			}},
		{"help", "print this help, or with a COMMAND its help", func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
			if len(args) > 0 && !isHelp(args[0]) {
				if c, ok := findCommand(args); ok {
					return c.run(ctx, append(args[1:], "--help"), getenv, stdout, stderr)
				}
				return cli.UnknownCommand("", args[0], commandNames())
			}
			return serverHelp(getenv, stdout)
		}},
	}
}

// findCommand returns the subcommand args name, if they name one.
func findCommand(args []string) (command, bool) {
	if len(args) == 0 {
		return command{}, false
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c, true
		}
	}
	return command{}, false
}

// isHelp reports whether arg asks for the usage.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

// serverHelp writes the usage to stdout, as `httpkv --help` does.
func serverHelp(getenv func(string) string, stdout io.Writer) error {
	_, err := parseConfig([]string{"--help"}, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// printUsage writes httpkv's usage to fs's output: what it does, its
// subcommands, and the server's flags, those of fs.
func printUsage(fs *flag.FlagSet) {
	var b strings.Builder
	b.WriteString(`Usage:
  httpkv [flags]             serve the API, and the console at /
  httpkv COMMAND [flags]     run a command

An etcd-style MVCC key-value store served as an HTTP/JSON API, with watch
streams as Server-Sent Events. It stops on SIGINT (Ctrl-C) or SIGTERM.

Commands:
`)
	for _, c := range serverCommands() {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString(`
Data commands, clients of a running server (--url, default $HTTPKV_URL or
` + cli.DefaultURL + `):
`)
	for _, s := range cli.Commands() {
		fmt.Fprintf(&b, "  %-10s %s\n", s.Name, s.Summary)
	}
	b.WriteString(`
Run "httpkv COMMAND --help" for a command's flags and examples.

Flags of the server (each also read from the environment as HTTPKV_ and its
name in upper snake case: --data-dir is HTTPKV_DATA_DIR; a flag wins):
`)
	io.WriteString(fs.Output(), b.String())
	fs.PrintDefaults()
}
