package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Env is what a command runs with: its standard streams, its
// environment, and the terminal, if any.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// ReadPassword asks for a password on the terminal, showing prompt;
	// nil when there is no terminal to ask on.
	ReadPassword func(prompt string) (string, error)
	// Terminal reports whether w is a terminal: progress is drawn only
	// there. Nil is never.
	Terminal func(w io.Writer) bool
}

// command is a data command, or a group of them (lease, user, role).
type command struct {
	name     string // its word: "get", or "grant" under "lease"
	args     string // its arguments in the usage: "KEY [VALUE]"
	summary  string // one line, for the lists of commands
	help     string // what it does, in paragraphs
	examples string // lines of shell; a line starting with # explains the next
	// minArgs and maxArgs bound the number of arguments; maxArgs -1 is
	// any number.
	minArgs, maxArgs int
	// setup adds the command's own flags to fs, and returns what runs it.
	setup func(fs *flag.FlagSet) action
	subs  []*command // a group's commands; a group has no setup
}

// action runs a command whose command line parsed.
type action func(ctx context.Context, x *call) error

// commands returns the data commands, in the order the usage lists them.
func commands() []*command {
	return []*command{
		getCommand(), putCommand(), patchCommand(), delCommand(), watchCommand(),
		txnCommand(), historyCommand(), leaseCommand(), lockCommand(), electCommand(),
		exportCommand(), importCommand(), restoreCommand(), statusCommand(), compactCommand(),
		userCommand(), roleCommand(), authCommand(),
	}
}

// Summary is a data command's name and its one line of help.
type Summary struct{ Name, Summary string }

// Commands lists the data commands, for httpkv's usage.
func Commands() []Summary {
	var out []Summary
	for _, c := range commands() {
		out = append(out, Summary{c.name, c.summary})
	}
	return out
}

// Names lists the data commands' names.
func Names() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	return out
}

// Leading reports whether args run a data command with common flags
// before its name (httpkv -o json get KEY, as etcdctl -w json get KEY),
// and returns them with the command's name first.
func Leading(args []string) ([]string, bool) {
	var common commonFlags
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	common.add(fs)
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if fs.Lookup(name) == nil {
			return args, false
		}
		i++
		if !hasValue {
			i++
		}
	}
	if i == 0 || i >= len(args) || !slices.Contains(Names(), args[i]) {
		return args, false
	}
	return slices.Concat(args[i:i+1], args[:i], args[i+1:]), true
}

// Run runs the data command args[0] with the rest of args.
func Run(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return usagef("", "no command")
	}
	c, path, args, err := find(commands(), "", args)
	if err != nil {
		return err
	}
	if c.setup == nil { // a group named alone, or asked for help
		if len(args) > 0 && !isHelp(args[0]) {
			if strings.HasPrefix(args[0], "-") {
				return usagef(path, "the command comes before the flags: httpkv %s COMMAND [flags], one of %s", path, strings.Join(names(c.subs), ", "))
			}
			return UnknownCommand(path, args[0], names(c.subs))
		}
		if len(args) == 0 {
			return usagef(path, "which %s command? %s", path, strings.Join(names(c.subs), ", "))
		}
		writeHelp(env.Stdout, path, c)
		return nil
	}
	fs := flag.NewFlagSet("httpkv "+path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var common commonFlags
	act := c.setup(fs)
	common.add(fs)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeHelp(env.Stdout, path, c)
		return nil
	}
	if err != nil {
		return FlagError(path, fs, err)
	}
	if len(pos) < c.minArgs || c.maxArgs >= 0 && len(pos) > c.maxArgs {
		return usagef(path, "%s; usage: httpkv %s %s", argCountMessage(len(pos), c), path, c.args)
	}
	x, err := newCall(path, pos, common, fs, env)
	if err != nil {
		return err
	}
	return x.explain(act(ctx, x))
}

// find finds the command args name, descending into groups, and
// returns it with its path ("lease grant") and the arguments after its
// name.
func find(cs []*command, parent string, args []string) (*command, string, []string, error) {
	for _, c := range cs {
		if c.name != args[0] {
			continue
		}
		path := strings.TrimSpace(parent + " " + c.name)
		if c.subs != nil && len(args) > 1 && !strings.HasPrefix(args[1], "-") {
			return find(c.subs, path, args[1:])
		}
		return c, path, args[1:], nil
	}
	return nil, "", nil, UnknownCommand(parent, args[0], names(cs))
}

func names(cs []*command) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

func argCountMessage(n int, c *command) string {
	switch {
	case n < c.minArgs && n == 0:
		return "missing arguments"
	case n < c.minArgs:
		return "too few arguments"
	}
	return "too many arguments"
}

// writeHelp writes the help of the command at path.
func writeHelp(w io.Writer, path string, c *command) {
	var b strings.Builder
	if c.setup == nil {
		fmt.Fprintf(&b, "Usage:\n  httpkv %s COMMAND [flags]\n\n%s\n\nCommands:\n", path, strings.TrimSpace(c.help))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, s := range c.subs {
			fmt.Fprintf(tw, "  %s %s\t%s\n", s.name, s.args, s.summary)
		}
		tw.Flush()
		fmt.Fprintf(&b, "\nRun \"httpkv %s COMMAND --help\" for a command's flags and examples.\n", path)
		writeExamples(&b, c.examples)
		io.WriteString(w, b.String())
		return
	}
	fmt.Fprintf(&b, "Usage:\n  httpkv %s %s [flags]\n\n%s\n", path, c.args, strings.TrimSpace(c.help))
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	c.setup(fs)
	if flags := flagLines(fs); flags != "" {
		b.WriteString("\nFlags:\n" + flags)
	}
	var common commonFlags
	cfs := flag.NewFlagSet("common", flag.ContinueOnError)
	common.add(cfs)
	b.WriteString("\nCommon flags:\n" + flagLines(cfs))
	writeExamples(&b, c.examples)
	io.WriteString(w, b.String())
}

func writeExamples(b *strings.Builder, examples string) {
	if examples = strings.TrimSpace(examples); examples == "" {
		return
	}
	b.WriteString("\nExamples:\n")
	for _, l := range strings.Split(examples, "\n") {
		b.WriteString("  " + strings.TrimSpace(l) + "\n")
	}
}

// flagLines lists the flags of fs, a line each: -o and --output, which
// are one flag, on one line.
func flagLines(fs *flag.FlagSet) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "o" {
			return // listed with --output
		}
		name, usage := flag.UnquoteUsage(f)
		left := "      " + dashes(f.Name)
		if f.Name == "output" {
			left = "  -o, --output"
		}
		if name != "" {
			left += " " + name
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" {
			usage += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(tw, "%s\t%s\n", left, usage)
	})
	tw.Flush()
	return b.String()
}
