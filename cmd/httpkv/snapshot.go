package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
	"github.com/httpkv/httpkv/snapshot"
)

// dataFileName is the store's file in --data-dir, as run opens it.
const dataFileName = embedded.FileName

const snapshotUsage = `Usage: httpkv snapshot COMMAND [flags] FILE

Backups of a running server, verified before they are kept.

Commands:
  save     download a snapshot from a server into FILE
  status   describe the snapshot in FILE
  restore  make a new data directory of the snapshot in FILE

Run "httpkv snapshot COMMAND --help" for a command's flags.
`

// runSnapshot is `httpkv snapshot save|status|restore`.
func runSnapshot(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, snapshotUsage)
		return errors.New("snapshot: a command is needed: save, status or restore")
	}
	switch args[0] {
	case "save":
		return runSnapshotSave(ctx, args[1:], getenv, stdout, stderr)
	case "status":
		return runSnapshotStatus(args[1:], stdout, stderr)
	case "restore":
		return runSnapshotRestore(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, snapshotUsage)
		return nil
	}
	fmt.Fprint(stderr, snapshotUsage)
	return fmt.Errorf("snapshot: unknown command %q", args[0])
}

// newSnapshotFlags returns the flag set of a snapshot command, whose usage
// prints synopsis and then the flags.
func newSnapshotFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("httpkv snapshot "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: httpkv snapshot %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFile parses args, in which flags may come before or after the one
// FILE argument, and returns FILE.
func parseFile(fs *flag.FlagSet, args []string) (string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 1 {
		fs.Usage()
		return "", &cli.UsageError{Command: strings.TrimPrefix(fs.Name(), "httpkv "), Msg: fmt.Sprintf("one FILE is needed, not %d", len(files))}
	}
	return files[0], nil
}

// helpRequested turns the error of --help into success: the usage was
// what was asked for. Another error of fs.Parse is a usage error, with
// the nearest flag for one fs does not know.
func helpRequested(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	var ue *cli.UsageError
	if fs != nil && !errors.As(err, &ue) {
		return cli.FlagError(strings.TrimPrefix(fs.Name(), "httpkv "), fs, err)
	}
	return err
}

// runSnapshotStatus is `httpkv snapshot status`.
func runSnapshotStatus(args []string, stdout, stderr io.Writer) error {
	fs := newSnapshotFlags("status", "status [--json] FILE\n\nVerifies the snapshot in FILE (its hash, then its structure) and describes it.", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object, for scripts")
	file, err := parseFile(fs, args)
	if err != nil {
		return helpRequested(fs, err)
	}
	info, err := snapshot.Inspect(file)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(info)
	}
	return printInfo(stdout, info)
}

// printInfo writes what a snapshot holds as a table for people.
func printInfo(w io.Writer, info snapshot.Info) error {
	auth := "disabled"
	if info.AuthEnabled {
		auth = "enabled"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "format\t%s\n", info.Format)
	fmt.Fprintf(tw, "revision\t%d\n", info.Revision)
	fmt.Fprintf(tw, "compact revision\t%d\n", info.CompactRevision)
	fmt.Fprintf(tw, "keys\t%d\n", info.Keys)
	fmt.Fprintf(tw, "leases\t%d\n", info.Leases)
	fmt.Fprintf(tw, "users\t%d\n", info.Users)
	fmt.Fprintf(tw, "roles\t%d\n", info.Roles)
	fmt.Fprintf(tw, "auth\t%s\n", auth)
	fmt.Fprintf(tw, "size\t%d bytes (%s)\n", info.Size, byteSize(info.Size))
	fmt.Fprintf(tw, "sha256\t%s\n", info.Hash)
	return tw.Flush()
}

// byteSize formats n bytes for people: 1.5 MiB.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// runSnapshotRestore is `httpkv snapshot restore`.
func runSnapshotRestore(args []string, stdout, stderr io.Writer) error {
	fs := newSnapshotFlags("restore", "restore --data-dir DIR FILE\n\n"+
		"Verifies the snapshot in FILE (its hash, then its structure) and writes its store into DIR,\n"+
		"which must be empty or not exist. A server started with --data-dir DIR begins at the\n"+
		"snapshot's revision with its keys, history, leases (each with its full TTL again), users,\n"+
		"roles and auth switch.", stderr)
	dir := fs.String("data-dir", "", "the new data directory (required): empty or not yet there")
	file, err := parseFile(fs, args)
	if err != nil {
		return helpRequested(fs, err)
	}
	if strings.TrimSpace(*dir) == "" {
		fs.Usage()
		return errors.New("snapshot restore: --data-dir is required")
	}
	info, err := snapshot.Restore(file, *dir, dataFileName)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored revision %d (%d keys, %d leases, %d users) into %s\n",
		info.Revision, info.Keys, info.Leases, info.Users, *dir)
	fmt.Fprintf(stdout, "start the server on it with: httpkv --data-dir %s\n", *dir)
	return nil
}
