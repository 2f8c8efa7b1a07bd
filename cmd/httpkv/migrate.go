package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/httpkv/httpkv/backend/etcd"
	"github.com/httpkv/httpkv/snapshot"
)

const migrateSynopsis = `migrate --from FILE --etcd-endpoints URLS [--etcd-namespace NS] [flags]

Loads the current state of an embedded store's snapshot (httpkv snapshot
save) into an etcd cluster, for gateways started with --backend etcd and
the same --etcd-namespace: every live key with its lease, every lease with
its ID and full TTL, and auth's users, roles and switch. History is not
copied: etcd numbers revisions and versions anew. The namespace must be
empty (no key, lease, user or role of its own); other namespaces of the
cluster do not matter, but a lease ID another one holds cannot be
migrated. Stop writes to the source first: a write after the snapshot is
not in it.`

// runMigrate is `httpkv migrate`.
func runMigrate(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("httpkv migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: httpkv %s\n\n", migrateSynopsis)
		fs.PrintDefaults()
	}
	from := fs.String("from", "", "the snapshot file to load (required)")
	maxTxnOps := fs.Int("max-txn-ops", etcd.DefaultMaxTxnOps, "most keys put by one etcd txn (at most etcd's own --max-txn-ops)")
	var ec etcdConfig
	ec.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		return helpRequested(fs, err)
	}
	switch {
	case fs.NArg() > 0:
		fs.Usage()
		return fmt.Errorf("migrate: unexpected argument %q", fs.Arg(0))
	case *from == "":
		fs.Usage()
		return errors.New("migrate: --from FILE is needed")
	case ec.endpointList() == nil:
		fs.Usage()
		return errors.New("migrate: --etcd-endpoints is needed")
	case (ec.cert == "") != (ec.key == ""):
		return errors.New("migrate: --etcd-cert and --etcd-key go together")
	case *maxTxnOps <= 0:
		return errors.New("migrate: --max-txn-ops must be positive")
	}
	tlsCfg, err := ec.tlsConfig()
	if err != nil {
		return err
	}
	src, err := snapshot.Open(*from)
	if err != nil {
		return fmt.Errorf("migrate: %s: %w", *from, err)
	}
	defer src.Close()
	done, err := etcd.Import(ctx, etcd.Options{
		Endpoints:      ec.endpointList(),
		Namespace:      ec.namespace,
		TLS:            tlsCfg,
		Username:       ec.username,
		Password:       ec.password,
		RequestTimeout: ec.requestTimeout,
		MaxTxnOps:      *maxTxnOps,
	}, src)
	if errors.Is(err, etcd.ErrOverlap) {
		return fmt.Errorf("migrate: --etcd-namespace %q: %w", ec.namespace, err)
	}
	if errors.Is(err, etcd.ErrNotEmpty) {
		return fmt.Errorf("migrate: %w: migrate into an empty namespace (--etcd-namespace)", err)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w (wrote %d leases, %d keys, %d auth records)", err, done.Leases, done.Keys, done.AuthRecords)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "from\t%s, revision %d\n", *from, src.Revision)
	fmt.Fprintf(tw, "keys\t%d\n", done.Keys)
	fmt.Fprintf(tw, "leases\t%d\n", done.Leases)
	fmt.Fprintf(tw, "auth records\t%d (%d users, %d roles, auth %s)\n", done.AuthRecords, src.Users, src.Roles, map[bool]string{true: "enabled", false: "disabled"}[src.AuthEnabled])
	fmt.Fprintf(tw, "etcd revision\t%d\n", done.Revision)
	return tw.Flush()
}
