package concurrency

import (
	"context"

	"github.com/httpkv/httpkv/kv"
)

// Observation is the state of an election's office from a revision on:
// who leads, with which value, or nobody.
type Observation struct {
	// Revision is the revision at which this became true: the put of the
	// leader's key or of its new value, or the delete that ended the
	// previous leadership.
	Revision int64
	// Leader is the leader's key, nil when the office is empty.
	Leader *kv.KeyValue
}

// Observer follows the leader of an election revision by revision, as
// etcd's v3election Observe does, but exactly: every change of leader,
// every put of the leader's value and every time the office becomes
// empty is reported once, in revision order, with the revision it
// happened at, even when several happen between two reads.
//
// It never watches more than one thing: the leader's key while there is
// a leader (a delete there means the leadership changed: the new leader
// is read at that very revision), or the election's prefix while there
// is none (its first put makes a leader). It starts no goroutine: its
// owner waits on Ready and calls Next.
type Observer struct {
	ctx   context.Context
	b     Backend
	name  []byte
	state Observation
	w     kv.WatchStream
}

// Observe starts following the election called name. With after 0 the
// first observation, returned, is the state now. With after > 0 the
// caller knows the state at revision after (an observation of revision
// after, or the last one before it) and the observer reports only what
// changed since: the returned observation is that state, for the
// caller's information.
//
// ctx bounds the observer's reads and watches for its whole life. The
// error is the backend's: a *kv.CompactedError when after is below the
// compact revision, kv.ErrFutureRevision when after is above the current
// one.
func Observe(ctx context.Context, b Backend, name []byte, after int64) (*Observer, Observation, error) {
	if err := checkName(name); err != nil {
		return nil, Observation{}, err
	}
	if after < 0 {
		return nil, Observation{}, invalidf("a revision must not be negative, not %d", after)
	}
	o := &Observer{ctx: ctx, b: b, name: name}
	if err := o.settle(after); err != nil {
		return nil, Observation{}, err
	}
	return o, o.state, nil
}

// Ready is signalled when Next may have observations. It changes after
// Next has moved to another watch: take it again before each wait.
func (o *Observer) Ready() <-chan struct{} { return o.w.Ready() }

// Next returns the observations ready, possibly none, in revision order.
// An error ends the observer: a *kv.CompactedError when history it
// needed was compacted (it fell behind a compaction), ErrWatchEnded when
// the backend ended its watch, or a backend error.
func (o *Observer) Next() ([]Observation, error) {
	evs, err := nextEvents(o.w)
	var out []Observation
	for _, ev := range evs {
		rev := ev.KV.ModRevision
		if rev <= o.state.Revision {
			continue
		}
		switch {
		case o.state.Leader != nil && ev.Type == kv.EventPut:
			// The leader's key changed value (a proclaim).
			leader := ev.KV
			o.state = Observation{Revision: rev, Leader: &leader}
			out = append(out, o.state)
			continue
		case o.state.Leader == nil && ev.Type == kv.EventDelete:
			continue // a delete in an empty office changes nothing
		}
		// The leader's key was deleted, or a key was put in an empty
		// office: who leads at that revision? The rest of this watch's
		// events are of no use once it is replaced.
		if err := o.settle(rev); err != nil {
			return out, err
		}
		return append(out, o.state), nil
	}
	return out, err
}

// settle reads who leads at revision rev (0: now) and watches what may
// change that, from the next revision on.
func (o *Observer) settle(rev int64) error {
	leader, rev, err := leaderAt(o.ctx, o.b, o.name, rev)
	if err != nil {
		return err
	}
	req := kv.WatchRequest{Key: Prefix(o.name), End: PrefixEnd(o.name), StartRevision: rev + 1}
	if leader != nil {
		req = kv.WatchRequest{Key: leader.Key, StartRevision: rev + 1}
	}
	w, err := o.b.Watch(o.ctx, req)
	if err != nil {
		return err
	}
	if o.w != nil {
		o.w.Close()
	}
	o.w = w
	o.state = Observation{Revision: rev, Leader: leader}
	return nil
}

// Close ends the observer's watch. It is safe to call more than once.
func (o *Observer) Close() {
	if o.w != nil {
		o.w.Close()
	}
}
