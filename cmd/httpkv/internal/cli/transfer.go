package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/httpkv/httpkv/client"
)

func exportCommand() *command {
	return &command{
		name: "export", args: "[KEY]", minArgs: 0, maxArgs: 1,
		summary: "write every key of a range, at one revision, as NDJSON",
		help: `Writes every key of a range (every key without KEY; KEY with --prefix,
--from-key or --range-end, or KEY alone), however many, at one revision,
to stdout or --file: a first line {"header":{"revision":R},"count":N},
then one key a line in key order, with its value and metadata, as GET
/v1/export streams it. "httpkv import" takes the file back as it is.

With --file, the file is written in full or not at all (a temporary file
renamed once complete). On a terminal, a progress bar on stderr counts
the keys.`,
		examples: `httpkv export > everything.ndjson
httpkv export config/ --prefix --file config.ndjson
httpkv export config/ --prefix --rev 1200 --file config-1200.ndjson`,
		setup: func(fs *flag.FlagSet) action {
			var sel selectorFlags
			sel.add(fs)
			rev := fs.Int64("rev", 0, "export as of revision `REV` (default: now)")
			file := fs.String("file", "", "write to this `FILE` instead of stdout")
			return func(ctx context.Context, x *call) error {
				s := client.All()
				if len(x.args) > 0 {
					var err error
					if s, err = sel.selector(x, x.args[0]); err != nil {
						return err
					}
				} else if sel.prefix || sel.fromKey || x.given["range-end"] {
					return usagef(x.path, "--prefix, --from-key and --range-end need a KEY")
				}
				exp, err := x.api.Export(ctx, s, *rev)
				if err != nil {
					return err
				}
				defer exp.Close()
				var out io.Writer = x.env.Stdout
				var tmp *os.File
				if *file != "" {
					if tmp, err = os.CreateTemp(filepath.Dir(*file), ".httpkv-export-*"); err != nil {
						return err
					}
					defer os.Remove(tmp.Name())
					defer tmp.Close()
					out = tmp
				}
				var body io.Reader = exp
				if bar := x.progress(exp.Count+1, "export", false); bar != nil {
					defer bar.Exit()
					body = io.TeeReader(exp, lineCounter{bar})
				}
				n, err := io.Copy(out, body)
				if err != nil {
					return fmt.Errorf("export: %w", err)
				}
				if tmp != nil {
					if err := tmp.Sync(); err != nil {
						return err
					}
					if err := tmp.Close(); err != nil {
						return err
					}
					if err := os.Rename(tmp.Name(), *file); err != nil {
						return err
					}
					fmt.Fprintf(x.env.Stderr, "exported %d keys at revision %d (%d bytes) to %s\n", exp.Count, exp.Header.Revision, n, *file)
				}
				return nil
			}
		},
	}
}

// lineCounter adds a line to a progress bar for each newline written.
type lineCounter struct{ bar *progressbar.ProgressBar }

func (c lineCounter) Write(p []byte) (int, error) {
	if n := bytes.Count(p, []byte{'\n'}); n > 0 {
		_ = c.bar.Add(n)
	}
	return len(p), nil
}

// progress is a progress bar of total steps (bytes with inBytes) on
// stderr, when stderr is a terminal; nil otherwise. It never goes to
// stdout, whatever -o says.
func (x *call) progress(total int64, what string, inBytes bool) *progressbar.ProgressBar {
	if x.env.Terminal == nil || !x.env.Terminal(x.env.Stderr) {
		return nil
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(x.env.Stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(inBytes),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// printImport writes what an import or a restore did, or would do.
func (x *call) printImport(r *client.ImportResponse, dryRun bool) {
	what := "revision %d: created %d, updated %d, deleted %d, unchanged %d"
	if dryRun {
		what = "dry run at revision %d, nothing changed: would create %d, update %d, delete %d; %d unchanged"
	}
	x.out.answer(r.Raw, strconv.FormatInt(r.Header.Revision, 10), fmt.Sprintf(what, r.Header.Revision, r.Created, r.Updated, r.Deleted, r.Unchanged))
}

func importCommand() *command {
	return &command{
		name: "import", args: "FILE [KEY]", minArgs: 1, maxArgs: 2,
		summary: "make a range what an export file holds",
		help: `Puts the keys of FILE ("-" for stdin), an export or any NDJSON of objects
with a key and a value, at one revision: every key that differs. With
--replace it also deletes the keys of the scope that FILE lacks. The
scope is every key, or KEY with --prefix, --from-key or --range-end; a
key of FILE outside it exits 1 and changes nothing. --dry-run changes
nothing and says what would change. Imported keys have no lease.

The server takes at most its --max-import-bytes (64 MiB by default) at
once. On a terminal, a progress bar on stderr counts the bytes sent.

Prints what changed; -o value the revision; -o json the API's answer.`,
		examples: `httpkv import config.ndjson config/ --prefix --dry-run
httpkv import config.ndjson config/ --prefix --replace
httpkv export app/ --prefix | httpkv import - app/ --prefix --url http://staging:2378`,
		setup: func(fs *flag.FlagSet) action {
			var sel selectorFlags
			sel.add(fs)
			replace := fs.Bool("replace", false, "also delete the keys of the scope that FILE lacks")
			dryRun := fs.Bool("dry-run", false, "change nothing; say what would change")
			ifMatch := fs.Int64("if-match", 0, "import only if nothing in the scope changed after `REV`")
			return func(ctx context.Context, x *call) error {
				o := client.ImportOptions{Replace: *replace, DryRun: *dryRun, IfMatch: *ifMatch}
				if len(x.args) > 1 {
					var err error
					if o.Scope, err = sel.selector(x, x.args[1]); err != nil {
						return err
					}
				}
				var in io.Reader = x.env.Stdin
				size := int64(-1)
				if name := x.args[0]; name != "-" {
					f, err := os.Open(name)
					if err != nil {
						return err
					}
					defer f.Close()
					if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
						size = st.Size()
					}
					in = f
				}
				if bar := x.progress(size, "import", true); bar != nil {
					defer bar.Exit()
					in = io.TeeReader(in, bar)
				}
				r, err := x.api.Import(ctx, in, size, o)
				if err != nil {
					return err
				}
				x.printImport(r, *dryRun)
				return nil
			}
		},
	}
}

func restoreCommand() *command {
	return &command{
		name: "restore", args: "KEY --rev R", minArgs: 1, maxArgs: 1,
		summary: "make a key or a range what it was at a past revision",
		help: `Makes KEY, or the keys of a range (--prefix, --from-key,
--range-end), hold exactly what they held at revision R, in one new
revision: puts for the keys changed or deleted since, deletes for the
keys created since. Restored keys have no lease. A revision below the
compact revision exits 1 (compacted). --dry-run changes nothing and says
what would change.

Prints what changed; -o value the revision; -o json the API's answer.`,
		examples: `httpkv restore config/db/url --rev 41
httpkv restore config/ --prefix --rev 1200 --dry-run`,
		setup: func(fs *flag.FlagSet) action {
			var sel selectorFlags
			sel.add(fs)
			rev := fs.Int64("rev", 0, "the revision `REV` to go back to (required)")
			dryRun := fs.Bool("dry-run", false, "change nothing; say what would change")
			return func(ctx context.Context, x *call) error {
				if *rev < 1 {
					return usagef(x.path, "--rev R is required: the revision to go back to")
				}
				s, err := sel.selector(x, x.args[0])
				if err != nil {
					return err
				}
				r, err := x.api.Restore(ctx, s, *rev, *dryRun)
				if err != nil {
					return err
				}
				x.printImport(r, *dryRun)
				return nil
			}
		},
	}
}
