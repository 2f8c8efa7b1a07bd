package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/httpkv/httpkv/client"
)

func txnCommand() *command {
	return &command{
		name: "txn", args: "", minArgs: 0, maxArgs: 0,
		summary: "run a transaction read from stdin as JSON",
		help: `Runs the transaction that stdin holds, the JSON of POST /v1/txn:
compares, then the success ops if every compare holds, else the failure
ops, all at one revision.

Prints SUCCESS or FAILURE, then what each op of the branch that ran
answered: OK for a put, the count for a delete, the keys and values of
a range; -o value prints the values the ranges read; -o json the API's
answer.`,
		examples: `httpkv txn <<'EOF'
{"compare": [{"key": "leader", "target": "create", "result": "equal", "create_revision": 0}],
 "success": [{"put": {"key": "leader", "value": "me"}}],
 "failure": [{"range": {"key": "leader"}}]}
EOF`,
		setup: func(fs *flag.FlagSet) action {
			return func(ctx context.Context, x *call) error {
				body, err := io.ReadAll(x.env.Stdin)
				if err != nil {
					return fmt.Errorf("reading stdin: %w", err)
				}
				if !json.Valid(body) {
					return usagef(x.path, "stdin is not JSON: give the txn's JSON, as POST /v1/txn takes it")
				}
				txn, err := x.api.Txn(ctx, json.RawMessage(body))
				if err != nil {
					return err
				}
				if x.out.json() {
					x.out.raw(txn.Raw)
					return nil
				}
				x.printTxn(txn, "")
				return nil
			}
		},
	}
}

// printTxn writes what a txn answered, its nested txns indented.
func (x *call) printTxn(txn *client.TxnResponse, indent string) {
	if !x.out.value() {
		if txn.Succeeded {
			x.out.linef("%sSUCCESS", indent)
		} else {
			x.out.linef("%sFAILURE", indent)
		}
	}
	for _, r := range txn.Responses {
		switch {
		case r.Range != nil:
			for i := range r.Range.KVs {
				if x.out.value() {
					x.out.line(r.Range.KVs[i].Value)
				} else {
					x.out.kv(&r.Range.KVs[i], false)
				}
			}
		case x.out.value():
		case r.Put != nil:
			x.out.linef("%sOK", indent)
		case r.Delete != nil:
			x.out.linef("%s%d", indent, r.Delete.Deleted)
		case r.Txn != nil:
			x.printTxn(r.Txn, indent+"  ")
		}
	}
}

func historyCommand() *command {
	return &command{
		name: "history", args: "KEY", minArgs: 1, maxArgs: 1,
		summary: "print what happened to a key or a range, deletes included",
		help: `Prints every change of KEY, or of the keys of a range (--prefix,
--from-key, --range-end), oldest first (--newest-first for the other
way), as a watch from --rev would have delivered them, following every
page. History below the compact revision is gone: a --rev below it
exits 1 (compacted).

Prints each event as PUT or DELETE with its key and revision, and a
put's value on the next line; -o value prints the values alone; -o json
each page the API answered.`,
		examples: `httpkv history config/db/url
httpkv history config/ --prefix --rev 100 --limit 20
# what was deleted under config/
httpkv history config/ --prefix --deletes-only`,
		setup: func(fs *flag.FlagSet) action {
			var sel selectorFlags
			sel.add(fs)
			rev := fs.Int64("rev", 0, "start at revision `REV` (default: the oldest held)")
			end := fs.Int64("end-rev", 0, "stop at revision `REV` (default: the current one)")
			newest := fs.Bool("newest-first", false, "newest first")
			prevKV := fs.Bool("prev-kv", false, "print the value before each change too")
			deletes := fs.Bool("deletes-only", false, "deletes only")
			puts := fs.Bool("puts-only", false, "puts only")
			limit := fs.Int64("limit", 0, "print at most `N` events (default: all of them)")
			return func(ctx context.Context, x *call) error {
				s, err := sel.selector(x, x.args[0])
				if err != nil {
					return err
				}
				if *deletes && *puts {
					return usagef(x.path, "--deletes-only and --puts-only go one at a time")
				}
				o := client.HistoryOptions{StartRevision: *rev, EndRevision: *end, Descend: *newest, PrevKV: *prevKV,
					NoPut: *deletes, NoDelete: *puts, Limit: *limit}
				for page, err := range x.api.History(ctx, s, o) {
					if err != nil {
						return err
					}
					if x.out.json() {
						x.out.raw(page.Raw)
						continue
					}
					for _, ev := range page.Events {
						if x.out.value() {
							x.out.line(ev.KV.Value)
						} else {
							x.printEvent(ev, *prevKV)
						}
					}
				}
				return nil
			}
		},
	}
}
