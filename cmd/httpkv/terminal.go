package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
)

// terminalEnv is the environment of a data command: the process's
// stdin, and its terminal, if it has one, to ask for passwords and draw
// progress on.
func terminalEnv(getenv func(string) string, stdout, stderr io.Writer) cli.Env {
	env := cli.Env{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv, Terminal: func(w io.Writer) bool { return isTerminal(w) }}
	if isTerminal(os.Stdin) && isTerminal(stderr) {
		env.ReadPassword = func(prompt string) (string, error) {
			fmt.Fprint(stderr, prompt)
			pw, err := term.ReadPassword(int(os.Stdin.Fd()))
			fmt.Fprintln(stderr)
			return string(pw), err
		}
	}
	return env
}

// isTerminal reports whether v is a file that is a terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
