package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/httpkv/httpkv/client"
)

func watchCommand() *command {
	return &command{
		name: "watch", args: "KEY", minArgs: 1, maxArgs: 1,
		summary: "print the changes of a key or a range as they happen",
		help: `Watches KEY, or every key of a range (--prefix, --from-key,
--range-end), from now or from a past revision (--rev), and prints each
change until Ctrl-C. After a lost connection or a restart of the server
it reconnects by itself and goes on right after the last revision it
printed: nothing is missed or printed twice. When the history it needs
was compacted it exits 1 (compacted): read the range again (get), and
watch from the revision after that read's.

Prints each event as PUT or DELETE, the key and, for a put, the value
on the next line; -o value prints each value alone (an empty line for a
delete); -o json every message of the API, one a line (the first is
created).`,
		examples: `httpkv watch config/ --prefix
# everything since revision 1, with the values before each change
httpkv watch config/ --prefix --rev 1 --prev-kv
# a script that acts on each new value
httpkv watch config/db/url -o value | while read -r url; do reconnect "$url"; done`,
		setup: func(fs *flag.FlagSet) action {
			var sel selectorFlags
			sel.add(fs)
			rev := fs.Int64("rev", 0, "start at revision `REV` (default: now)")
			prevKV := fs.Bool("prev-kv", false, "print the value before each change too")
			progress := fs.Bool("progress", false, "with -o json, also print the server's progress messages while nothing changes")
			return func(ctx context.Context, x *call) error {
				s, err := sel.selector(x, x.args[0])
				if err != nil {
					return err
				}
				o := client.WatchOptions{StartRevision: *rev, PrevKV: *prevKV, ProgressNotify: *progress, OnRetry: x.onRetry("watch")}
				for m, err := range x.api.Watch(ctx, s, o) {
					if err != nil {
						return endOfStream(ctx, err)
					}
					x.retried = false
					switch {
					case x.out.json():
						x.out.raw(m.Raw)
					case x.out.value():
						for _, ev := range m.Events {
							x.out.line(ev.KV.Value)
						}
					default:
						for _, ev := range m.Events {
							x.printEvent(ev, *prevKV)
						}
					}
				}
				return nil
			}
		},
	}
}

// printEvent writes an event for people.
func (x *call) printEvent(ev client.Event, prev bool) {
	if ev.Type == "delete" {
		x.out.linef("DELETE %s (revision %d)", printable(ev.KV.Key), ev.KV.ModRevision)
	} else {
		x.out.linef("PUT %s (revision %d)", printable(ev.KV.Key), ev.KV.ModRevision)
		x.out.line(printable(ev.KV.Value))
	}
	if prev && ev.PrevKV != nil {
		x.out.linef("  was (revision %d):", ev.PrevKV.ModRevision)
		x.out.line(printable(ev.PrevKV.Value))
	}
}

// onRetry tells a person on stderr that a stream lost its connection
// and is reconnecting, once per outage.
func (x *call) onRetry(what string) func(error) {
	return func(err error) {
		if !x.retried {
			fmt.Fprintf(x.env.Stderr, "httpkv: %s: %v; reconnecting\n", what, x.explain(err))
		}
		x.retried = true
	}
}

// endOfStream is the error a stream ended with: none when Ctrl-C
// (ctx) ended it, which is how a watch is meant to end.
func endOfStream(ctx context.Context, err error) error {
	if ctx.Err() != nil && (errors.Is(err, ctx.Err()) || errors.Is(err, context.Cause(ctx))) {
		return nil
	}
	return err
}
