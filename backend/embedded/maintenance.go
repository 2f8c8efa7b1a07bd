package embedded

import (
	"context"
	"io"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/snapshot"
)

// Compact compacts the store at rev; with physical it waits until the
// history below rev is gone from the file, or ctx is done.
func (b *Backend) Compact(ctx context.Context, rev int64, physical bool) error {
	done, err := b.kv.Compact(rev)
	if err != nil || !physical {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Defrag rewrites the file without its free pages.
func (b *Backend) Defrag(context.Context) (int64, error) {
	if err := b.kv.Defrag(); err != nil {
		return 0, err
	}
	size, _ := b.kv.DBSize()
	return size, nil
}

// Alarms returns the active alarms.
func (b *Backend) Alarms(context.Context) ([]kv.Alarm, error) { return b.kv.Alarms(), nil }

// DisarmAlarms clears NOSPACE; a write that still does not fit raises it
// again.
func (b *Backend) DisarmAlarms(context.Context) ([]kv.Alarm, error) {
	if err := b.kv.DisarmNoSpace(); err != nil {
		return nil, err
	}
	return b.kv.Alarms(), nil
}

// Snapshot begins a snapshot of the store: its bbolt file followed by the
// file's SHA-256.
func (b *Backend) Snapshot(context.Context) (kv.Snapshot, error) {
	sn, err := b.kv.Snapshot()
	if err != nil {
		return nil, err
	}
	return hashedSnapshot{sn}, nil
}

// hashedSnapshot streams an mvcc snapshot with its hash after it.
type hashedSnapshot struct{ *mvcc.Snapshot }

func (s hashedSnapshot) Size() int64 { return s.Snapshot.Size() + snapshot.HashSize }

func (s hashedSnapshot) WriteTo(w io.Writer) (int64, error) { return snapshot.Write(w, s.Snapshot) }

// Rev is the store's current revision.
func (b *Backend) Rev() int64 { return b.kv.Rev() }

// Failed returns why the store takes no writes, or nil.
func (b *Backend) Failed() error { return b.kv.Failed() }

// Stats are the store's figures that cost little to gather.
func (b *Backend) Stats() kv.Stats {
	size, inUse := b.kv.DBSize()
	ws := b.watch.Stats()
	return kv.Stats{
		Revision:        b.kv.Rev(),
		CompactRevision: b.kv.CompactRev(),
		DBSize:          size,
		DBSizeInUse:     inUse,
		Leases:          b.leases.Count(),
		Alarms:          b.kv.Alarms(),
		Watchers: kv.WatcherStats{
			Synced: ws.Synced, Unsynced: ws.Unsynced, Victims: ws.Victims,
			PendingEvents: ws.PendingEvents, PendingBytes: ws.PendingBytes, EventsSent: ws.EventsSent,
		},
	}
}

// Status is Stats with the count of live keys, which walks the index.
func (b *Backend) Status(context.Context) (kv.Status, error) {
	st := b.kv.Stats()
	out := kv.Status{Stats: b.Stats(), Keys: st.Keys}
	out.Revision, out.CompactRevision = st.Revision, st.CompactRevision
	out.DBSize, out.DBSizeInUse = st.DBSize, st.DBSizeInUse
	return out, nil
}

// PageTokenKey is the key that seals page tokens.
func (b *Backend) PageTokenKey() []byte { return b.tokenKey }
