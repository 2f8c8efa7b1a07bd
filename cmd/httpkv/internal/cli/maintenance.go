package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
)

func statusCommand() *command {
	return &command{
		name: "status", args: "", minArgs: 0, maxArgs: 0,
		summary: "print the server's version, revision, size and counts",
		help: `Prints the server's status: its version, revision and compact
revision, the size of its backend, how many keys, leases and watchers
it holds, and its active alarms.

-o value prints the revision alone; -o json the API's answer.`,
		examples: `httpkv status
REV=$(httpkv status -o value)`,
		setup: func(fs *flag.FlagSet) action {
			return func(ctx context.Context, x *call) error {
				st, err := x.api.Status(ctx)
				if err != nil {
					return err
				}
				var table strings.Builder
				tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
				alarms := strings.Join(st.Alarms, ", ")
				if alarms == "" {
					alarms = "none"
				}
				for _, row := range [][2]string{
					{"version", st.Version},
					{"revision", strconv.FormatInt(st.Revision, 10)},
					{"compact revision", strconv.FormatInt(st.CompactRevision, 10)},
					{"db size", strconv.FormatInt(st.DBSize, 10) + " bytes (" + strconv.FormatInt(st.DBSizeInUse, 10) + " in use)"},
					{"keys", strconv.FormatInt(st.Keys, 10)},
					{"leases", strconv.FormatInt(st.Leases, 10)},
					{"watchers", strconv.FormatInt(st.Watchers.Synced, 10) + " synced, " + strconv.FormatInt(st.Watchers.Unsynced, 10) + " unsynced, " + strconv.FormatInt(st.Watchers.Victims, 10) + " victims"},
					{"alarms", alarms},
				} {
					tw.Write([]byte(row[0] + "\t" + row[1] + "\n"))
				}
				tw.Flush()
				x.out.answer(st.Raw, strconv.FormatInt(st.Revision, 10), strings.TrimSuffix(table.String(), "\n"))
				return nil
			}
		},
	}
}

func compactCommand() *command {
	return &command{
		name: "compact", args: "REV", minArgs: 1, maxArgs: 1,
		summary: "drop the history below a revision",
		help: `Compacts the history below revision REV: reads, watches and history
from before it answer compacted from then on. REV must be above the
compact revision (else exit 1, compacted) and at most the current one.
--physical waits until the space is reclaimed.`,
		examples: `httpkv compact "$(httpkv status -o value)" --physical`,
		setup: func(fs *flag.FlagSet) action {
			physical := fs.Bool("physical", false, "wait until the compaction is done on disk")
			return func(ctx context.Context, x *call) error {
				rev, err := positive(x, "REV", x.args[0])
				if err != nil {
					return err
				}
				r, err := x.api.Compact(ctx, rev, *physical)
				if err != nil {
					return err
				}
				x.out.answer(r.Raw, "", fmt.Sprintf("compacted below revision %d", rev))
				return nil
			}
		},
	}
}
