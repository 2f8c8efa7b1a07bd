package mvcc

import "github.com/httpkv/httpkv/kv"

// The store owns its commit point: every write goes through Write (Put,
// DeleteRange, Txn, a lease revoke, a compaction and an auth change
// included), and once a batch is durable the committer tells the store's
// observers what it changed, before it answers any writer of the batch
// (as etcd's watchable store does in End(), and bbolt's OnCommit). So an
// observer sees every revision, in order, exactly once, and a client that
// has its answer knows every observer has seen its write: there is no way
// to write around them.

// Observer is told of each committed batch that changed keys. The watch
// scheduler is one.
type Observer interface {
	// Publish receives the revisions a batch made, oldest first, each
	// with its events in the order they were written. It runs on the
	// committer goroutine, after the batch is durable and its staged
	// changes applied (reads see the revisions), and before the batch's
	// writers are answered: it must not block, nor call the Store's
	// write path. The events and their bytes are the observer's to keep.
	Publish(changes []kv.Changes)
}

// Observe makes an observer with start and registers it, between two
// batches of the committer: start receives the store's revision then,
// and the observer is told of every batch after it and of none before,
// so that it misses no revision and sees none twice. It fails on a store
// that is closed or read-only.
func Observe[O Observer](s *Store, start func(rev int64) O) (O, error) {
	var o O
	_, err := s.submit(&request{inMemory: true, exclusive: func() error {
		o = start(s.currentRev)
		s.observers = append(s.observers, o)
		return nil
	}})
	return o, err
}

// publish tells the observers of a committed batch's changes, those of
// requests that changed keys. The committer calls it.
func (s *Store) publish(replies []reply) {
	if len(s.observers) == 0 {
		return
	}
	var changes []kv.Changes
	for i := range replies {
		if replies[i].err == nil && len(replies[i].changes.Events) > 0 {
			changes = append(changes, replies[i].changes)
		}
	}
	if len(changes) == 0 {
		return
	}
	for _, o := range s.observers {
		o.Publish(changes)
	}
}

// ReadHistory calls fn with the events of revisions from to to, oldest
// first, read from one snapshot, until fn returns false; when from is
// below the snapshot's compact revision it starts there instead. It
// returns that compact revision, so that a reader catching up from
// before it knows that history is gone. (It is what the watch scheduler
// catches watchers up from.)
func (s *Store) ReadHistory(from, to int64, fn func(kv.Event) bool) (int64, error) {
	rt, err := s.Read()
	if err != nil {
		return 0, err
	}
	defer rt.End()
	compact := rt.CompactRev()
	from = max(from, compact)
	if from > to {
		return compact, nil
	}
	err = rt.History(from, func(ev kv.Event) bool {
		return ev.KV.ModRevision <= to && fn(ev)
	})
	return compact, err
}

// FillPrevKVs sets each event's PrevKV to the key's version at the
// revision before the event, nil where the key did not exist, all read
// from one snapshot. It returns how many events it filled: when the
// version an event needs is below the compact revision it stops there
// with a *kv.CompactedError.
func (s *Store) FillPrevKVs(events []*kv.Event) (int, error) {
	rt, err := s.Read()
	if err != nil {
		return 0, err
	}
	defer rt.End()
	for i, ev := range events {
		res, err := rt.Range(ev.KV.Key, nil, kv.RangeOptions{Revision: ev.KV.ModRevision - 1})
		if err != nil {
			return i, err
		}
		if len(res.KVs) == 1 {
			ev.PrevKV = &res.KVs[0]
		}
	}
	return len(events), nil
}
