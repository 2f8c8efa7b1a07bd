package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/httpkv/httpkv/client"
)

func leaseCommand() *command {
	return &command{
		name: "lease", summary: "grant, keep alive, read, list and revoke leases",
		help: `Leases: keys attached to a lease disappear, at one revision, when it
expires or is revoked; a keep-alive renews it for its whole TTL.`,
		examples: `ID=$(httpkv lease grant 60 -o value)
httpkv put services/api/1 10.0.0.7:8080 --lease "$ID"
httpkv lease keepalive "$ID" &
httpkv lease ttl "$ID" --keys
httpkv lease revoke "$ID"`,
		subs: []*command{
			{
				name: "grant", args: "TTL", minArgs: 1, maxArgs: 1,
				summary: "grant a lease of TTL seconds",
				help: `Grants a lease of TTL seconds (--id to choose its ID).

Prints the lease's ID and TTL; -o value prints the ID alone; -o json the
API's answer.`,
				examples: `httpkv lease grant 60
ID=$(httpkv lease grant 60 -o value)`,
				setup: func(fs *flag.FlagSet) action {
					id := fs.Int64("id", 0, "the lease's `ID` (default: the server chooses)")
					return func(ctx context.Context, x *call) error {
						ttl, err := positive(x, "TTL", x.args[0])
						if err != nil {
							return err
						}
						l, err := x.api.Grant(ctx, ttl, *id)
						if err != nil {
							return err
						}
						x.out.answer(l.Raw, strconv.FormatInt(l.ID, 10), fmt.Sprintf("lease %d granted with TTL %ds", l.ID, l.TTL))
						return nil
					}
				},
			},
			{
				name: "revoke", args: "ID", minArgs: 1, maxArgs: 1,
				summary: "revoke a lease, deleting its keys",
				help: `Revokes the lease ID and deletes its keys, at one revision. An unknown
ID exits 1 (lease_not_found).`,
				examples: `httpkv lease revoke 7587883243612577541`,
				setup: func(fs *flag.FlagSet) action {
					return func(ctx context.Context, x *call) error {
						id, err := positive(x, "ID", x.args[0])
						if err != nil {
							return err
						}
						r, err := x.api.Revoke(ctx, id)
						if err != nil {
							return err
						}
						x.out.answer(r.Raw, "", fmt.Sprintf("lease %d revoked", id))
						return nil
					}
				},
			},
			{
				name: "keepalive", args: "ID", minArgs: 1, maxArgs: 1,
				summary: "keep a lease alive until Ctrl-C",
				help: `Renews the lease ID for its whole TTL, a third of its TTL before it
would expire, until Ctrl-C (or once, with --once). It exits 1 when the
lease is gone (lease_not_found); a server out of reach is tried again
until the lease would have expired.

Prints each renewal; -o value the TTL; -o json each answer of the API.`,
				examples: `httpkv lease keepalive 7587883243612577541
httpkv lease keepalive 7587883243612577541 --once`,
				setup: func(fs *flag.FlagSet) action {
					once := fs.Bool("once", false, "renew once, and exit")
					return func(ctx context.Context, x *call) error {
						id, err := positive(x, "ID", x.args[0])
						if err != nil {
							return err
						}
						print := func(l *client.LeaseResponse) {
							x.out.answer(l.Raw, strconv.FormatInt(l.TTL, 10), fmt.Sprintf("lease %d kept alive with TTL %ds", id, l.TTL))
						}
						l, err := x.api.KeepAlive(ctx, id)
						if err != nil {
							return err
						}
						print(l)
						if *once {
							return nil
						}
						return endOfStream(ctx, keepAlive(ctx, x.api, id, l.TTL, print))
					}
				},
			},
			{
				name: "ttl", args: "ID", minArgs: 1, maxArgs: 1,
				summary: "read a lease's time to live, and its keys",
				help: `Reads the lease ID: the seconds it has left, the TTL it was granted
with, and with --keys the keys attached to it.

-o value prints the seconds left alone; -o json the API's answer.`,
				examples: `httpkv lease ttl 7587883243612577541 --keys`,
				setup: func(fs *flag.FlagSet) action {
					keys := fs.Bool("keys", false, "list the keys attached to the lease")
					return func(ctx context.Context, x *call) error {
						id, err := positive(x, "ID", x.args[0])
						if err != nil {
							return err
						}
						l, err := x.api.TimeToLive(ctx, id, *keys)
						if err != nil {
							return err
						}
						said := []string{fmt.Sprintf("lease %d: %ds left of %ds", id, l.TTL, l.GrantedTTL)}
						for _, k := range l.Keys {
							said = append(said, string(printable(k)))
						}
						x.out.answer(l.Raw, strconv.FormatInt(l.TTL, 10), strings.Join(said, "\n"))
						return nil
					}
				},
			},
			{
				name: "list", args: "", minArgs: 0, maxArgs: 0,
				summary: "list the leases",
				help: `Lists the leases' IDs, in ascending order, following every page.

-o json prints each page the API answered.`,
				examples: `httpkv lease list`,
				setup: func(fs *flag.FlagSet) action {
					return func(ctx context.Context, x *call) error {
						for page, err := range x.api.Leases(ctx, client.LeaseListOptions{}) {
							if err != nil {
								return err
							}
							if x.out.json() {
								x.out.raw(page.Raw)
								continue
							}
							for _, l := range page.Leases {
								x.out.linef("%d", l.ID)
							}
						}
						return nil
					}
				},
			},
		},
	}
}

// positive reads the argument what as a number of at least 1.
func positive(x *call, what, arg string) (int64, error) {
	n, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || n < 1 {
		return 0, usagef(x.path, "%s must be a whole number of at least 1, not %q", what, arg)
	}
	return n, nil
}

// keepAlive keeps the lease id of ttl seconds alive until ctx ends, or
// it is lost: it renews it a third of its TTL before it would expire,
// and when the server cannot be reached it tries again every second
// until the lease would have expired. It returns why it stopped. each,
// if not nil, hears of each renewal.
func keepAlive(ctx context.Context, c *client.Client, id, ttl int64, each func(*client.LeaseResponse)) error {
	expires := time.Now().Add(time.Duration(ttl) * time.Second)
	wait := time.Duration(ttl) * time.Second / 3
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		l, err := c.KeepAlive(ctx, id)
		switch {
		case err == nil:
			expires = time.Now().Add(time.Duration(l.TTL) * time.Second)
			wait = time.Duration(l.TTL) * time.Second / 3
			if each != nil {
				each(l)
			}
		case ctx.Err() != nil:
			return ctx.Err()
		case client.HasCode(err, client.CodeLeaseNotFound) || time.Now().After(expires):
			return fmt.Errorf("lease %d lost: %w", id, err)
		default:
			wait = min(time.Second, time.Until(expires))
		}
	}
}
