package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/httpkv/httpkv/internal/suggest"
)

// UsageError is a command line that does not parse: the process exits 2.
type UsageError struct {
	Command string // "get", "lease grant"; "" for httpkv itself
	Msg     string
}

func (e *UsageError) Error() string {
	help := "httpkv --help"
	if e.Command != "" {
		help = "httpkv " + e.Command + " --help"
	}
	prefix := ""
	if e.Command != "" {
		prefix = e.Command + ": "
	}
	return fmt.Sprintf("%s%s\nRun %q for usage.", prefix, e.Msg, help)
}

func usagef(cmd, format string, args ...any) *UsageError {
	return &UsageError{Command: cmd, Msg: fmt.Sprintf(format, args...)}
}

// ExitStatus is an exit status already explained, or that needs no
// word: the status of the command that "lock NAME -- COMMAND" ran.
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Report writes what err says to stderr, as "httpkv: ...", and returns
// the process's exit status: 0 for nil, 2 for a *UsageError, the status
// of an ExitStatus, and 1 for any other error (an *client.Error says
// "httpkv: CODE: MESSAGE").
func Report(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var st ExitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	fmt.Fprintln(stderr, "httpkv:", err)
	var ue *UsageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// FlagError makes a *UsageError of an error of fs.Parse, suggesting the
// nearest flag for one fs does not know.
func FlagError(cmd string, fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		msg = "unknown flag --" + name
		if s := suggest.Nearest(name, known); s != "" {
			msg += " (did you mean " + dashes(s) + "?)"
		}
		if strings.TrimLeft(name, "0123456789.") == "" {
			msg = fmt.Sprintf(`-%s is read as a flag: a negative number is an argument after "--"`, name)
		}
	} else {
		msg = strings.Replace(msg, " -", " --", 1)
	}
	return &UsageError{Command: cmd, Msg: msg}
}

// UnknownCommand is the *UsageError of a command httpkv does not know,
// suggesting the nearest of known.
func UnknownCommand(parent, name string, known []string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if s := suggest.Nearest(name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return &UsageError{Command: parent, Msg: msg}
}

// dashes writes a flag's name as it is typed: -o, --prefix.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// parseArgs parses args with fs, flags before, between or after the
// arguments, and returns the arguments: everything that is not a flag
// or a flag's value, and everything after "--".
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// Parse stops at the first argument, or after "--", which it drops.
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
