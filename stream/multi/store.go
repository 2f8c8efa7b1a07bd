package multi

import (
	"context"
	"crypto/rand"

	"github.com/httpkv/httpkv/kv"
)

// The registry's side of shared streams: their records, changed by
// compare-and-swap (see record.go).

// changeRetries bounds the compare-and-swaps of one change of a record
// that others keep changing.
const changeRetries = 32

// probeStart asks the backend where a watch of req starts and what
// revision its created message says, as a watcher added now would.
func (g *Registry) probeStart(ctx context.Context, req kv.WatchRequest) (start, created int64, err error) {
	bw, err := g.backend.Watch(ctx, req)
	if err != nil {
		return 0, 0, err
	}
	defer bw.Close()
	return bw.StartRevision(), bw.Revision(), nil
}

// defOf returns a new watcher's record.
func (g *Registry) defOf(ctx context.Context, id int64, req kv.WatchRequest) (watchDef, error) {
	start, created, err := g.probeStart(ctx, req)
	if err != nil {
		return watchDef{}, err
	}
	return watchDef{ID: id, Key: req.Key, End: req.End, PrevKV: req.PrevKV, NoPut: req.NoPut, NoDelete: req.NoDelete,
		Progress: req.ProgressNotify, Start: start, Created: created}, nil
}

// defsOf returns the records of new watchers, numbered from id on. The
// watchers from now all start where the first of them does: one probe of
// the backend for the lot (over etcd, a request to it), not one each.
func (g *Registry) defsOf(ctx context.Context, id int64, reqs []kv.WatchRequest) ([]watchDef, error) {
	defs := make([]watchDef, len(reqs))
	var fromNow *watchDef
	for i, req := range reqs {
		if req.StartRevision == 0 && fromNow != nil {
			defs[i] = watchDef{ID: id + int64(i), Key: req.Key, End: req.End, PrevKV: req.PrevKV, NoPut: req.NoPut, NoDelete: req.NoDelete,
				Progress: req.ProgressNotify, Start: fromNow.Start, Created: fromNow.Created}
			continue
		}
		wd, err := g.defOf(ctx, id+int64(i), req)
		if err != nil {
			return nil, err
		}
		defs[i] = wd
		if req.StartRevision == 0 {
			fromNow = &defs[i]
		}
	}
	return defs, nil
}

// SharedCreate makes a stream's record, with its first watchers, within
// the bounds of the deployment's streams and watchers and its owner's,
// counted in the store: their watchers are the deployment's from now on,
// whether a gateway serves them or not.
func (g *Registry) SharedCreate(ctx context.Context, owner Owner, limitKey string, reqs []kv.WatchRequest) (string, []int64, error) {
	d := &streamDef{User: owner.User, UserID: []byte(owner.ID), AuthOn: owner.AuthOn, Limit: limitKey, Next: int64(len(reqs)) + 1}
	defs, err := g.defsOf(ctx, 1, reqs)
	if err != nil {
		return "", nil, err
	}
	d.Watches = defs
	ids := make([]int64, len(defs))
	for i := range defs {
		ids[i] = defs[i].ID
	}
	data, err := d.encode()
	if err != nil {
		return "", nil, err
	}
	for range changeRetries {
		c, err := g.store.CountStreamRecords(ctx, limitKey)
		switch {
		case err != nil:
			return "", nil, err
		case c.Streams >= int64(g.cfg.MaxStreams):
			return "", nil, &LimitError{Limit: LimitDeploymentStreams, Max: g.cfg.MaxStreams}
		case c.GroupStreams >= int64(g.cfg.MaxStreamsPerUser):
			return "", nil, &LimitError{Limit: LimitStreamsPerOwner, Max: g.cfg.MaxStreamsPerUser}
		}
		if aerr := g.recorded(c, len(reqs)); aerr != nil {
			return "", nil, aerr
		}
		id := newStreamID()
		ok, err := g.store.CreateStreamRecord(ctx, id, limitKey, data, kv.StreamWatchers{Live: len(reqs), AsOf: c.AsOf}, g.cfg.IdleTimeout)
		if err != nil {
			return "", nil, err
		}
		if ok {
			return id, ids, nil
		}
		// The id was taken, or another stream changed since the count:
		// count again.
	}
	return "", nil, ErrBusy
}

// loadDef reads stream id's record for owner: ErrStreamNotFound when it
// has none, or it is another's.
func (g *Registry) loadDef(ctx context.Context, id string, owner Owner) (*streamDef, int64, error) {
	data, version, err := g.store.StreamRecord(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	if data == nil {
		return nil, 0, ErrStreamNotFound
	}
	d, err := decodeStreamDef(data)
	if err != nil {
		return nil, 0, err
	}
	if d.owner() != owner {
		return nil, 0, ErrStreamNotFound
	}
	return d, version, nil
}

// changeDef applies change to stream id's record, again while another
// change comes between its read and its write, and hands the result to
// the stream's instance on this gateway, if any.
func (g *Registry) changeDef(ctx context.Context, id string, owner Owner, change func(d *streamDef) error) error {
	for range changeRetries {
		d, version, err := g.loadDef(ctx, id, owner)
		if err != nil {
			return err
		}
		was := d.live()
		if err := change(d); err != nil {
			return err
		}
		data, err := d.encode()
		if err != nil {
			return err
		}
		w := kv.StreamWatchers{Live: -1}
		if live := d.live(); live != was {
			w.Live = live
		}
		if added := w.Live - was; added > 0 {
			c, err := g.store.CountStreamRecords(ctx, d.Limit)
			if err != nil {
				return err
			}
			if aerr := g.recorded(c, added); aerr != nil {
				return aerr
			}
			w.AsOf = c.AsOf
		}
		v, ok, err := g.store.UpdateStreamRecord(ctx, id, d.Limit, data, w, version)
		if err != nil {
			return err
		}
		if ok {
			if ms := g.Get(id); ms != nil && ms.shared != nil {
				ms.mu.Lock()
				ms.applyDef(d, v)
				ms.mu.Unlock()
			}
			return nil
		}
	}
	return ErrBusy
}

// SharedAddWatch adds a watcher to stream id's record; the instance
// serving it, on whichever gateway, starts it.
func (g *Registry) SharedAddWatch(ctx context.Context, id string, owner Owner, req kv.WatchRequest) (int64, error) {
	wd, err := g.defOf(ctx, 0, req)
	if err != nil {
		return 0, err
	}
	err = g.changeDef(ctx, id, owner, func(d *streamDef) error {
		if d.live() >= g.cfg.MaxWatchers {
			return TooManyWatchers(g.cfg.MaxWatchers)
		}
		wd.ID = d.Next
		d.Next++
		d.Watches = append(d.Watches, wd)
		d.prune(g.cfg.MaxWatchers)
		return nil
	})
	return wd.ID, err
}

// SharedCancelWatch marks a watcher of stream id's record deleted; the
// instance serving it ends it.
func (g *Registry) SharedCancelWatch(ctx context.Context, id string, owner Owner, wid int64) error {
	return g.changeDef(ctx, id, owner, func(d *streamDef) error {
		wd := d.find(wid)
		if wd == nil || wd.Deleted {
			return ErrWatchNotFound
		}
		wd.Deleted = true
		d.prune(g.cfg.MaxWatchers)
		return nil
	})
}

// SharedDelete deletes stream id's record; the instance serving it ends.
func (g *Registry) SharedDelete(ctx context.Context, id string, owner Owner) error {
	if _, _, err := g.loadDef(ctx, id, owner); err != nil {
		return err
	}
	ok, err := g.store.DeleteStreamRecord(ctx, id, 0)
	if err != nil {
		return err
	}
	if ms := g.Get(id); ms != nil {
		ms.Delete("stream deleted")
	}
	if !ok {
		return ErrStreamNotFound
	}
	return nil
}

// Record is a shared stream's record, as Registry.Record read it for
// its owner.
type Record struct {
	id      string
	def     *streamDef
	version int64
}

// Record reads stream id's record for owner: ErrStreamNotFound when it
// has none, or it is another's.
func (g *Registry) Record(ctx context.Context, id string, owner Owner) (*Record, error) {
	d, version, err := g.loadDef(ctx, id, owner)
	if err != nil {
		return nil, err
	}
	return &Record{id: id, def: d, version: version}, nil
}

// AttachShared makes a connection the reader of the stream of rec,
// resuming after cursor c (nil: none), and claims the stream for this
// instance in the record: an instance reading it on another gateway ends
// its connection, as a newer connection takes a stream over on one
// gateway.
func (g *Registry) AttachShared(ctx context.Context, rec *Record, c *Cursor, authChanged <-chan struct{}) (*Conn, error) {
	id, d := rec.id, rec.def
	ms, conn, err := g.sharedOpen(ctx, id, d, rec.version, c, authChanged)
	if err != nil {
		return nil, err
	}
	if ms.isGone() {
		// Ended as it was attached (a cursor too old): the record goes too.
		_, _ = g.store.DeleteStreamRecord(ctx, id, 0)
		return &Conn{ms: ms, c: conn}, nil
	}
	name := ms.shared.name()
	if d.Read && d.Reader == name {
		return &Conn{ms: ms, c: conn}, nil
	}
	err = g.changeDef(ctx, id, d.owner(), func(d *streamDef) error {
		d.Read, d.Reader = true, name
		return nil
	})
	if err != nil {
		ms.detach(conn)
		return nil, err
	}
	return &Conn{ms: ms, c: conn}, nil
}

// sharedOpen attaches the connection: a cursor of this gateway's
// instance resumes from its log; one of another instance, or of a
// gateway gone, makes a new instance where the cursor says each watcher
// stands.
func (g *Registry) sharedOpen(ctx context.Context, id string, d *streamDef, version int64, c *Cursor, authChanged <-chan struct{}) (*Stream, *streamConn, error) {
	g.openMu.Lock()
	defer g.openMu.Unlock()
	ms := g.Get(id)
	if ms != nil && ms.shared == nil {
		ms = nil
	}
	switch {
	case c == nil && ms != nil:
		conn, err := ms.attach(0, false)
		return ms, conn, err
	case c == nil && d.Read:
		return nil, nil, ErrCursorNeeded
	case c != nil && !c.hasInst:
		if ms == nil {
			return nil, nil, &CursorError{Problem: CursorUnknown, Seq: c.seq}
		}
		conn, err := ms.attach(c.seq, true)
		return ms, conn, err
	case c != nil && ms != nil && ms.shared.inst == c.inst:
		conn, err := ms.attach(c.seq, true)
		return ms, conn, err
	case c != nil && c.hasPos && c.known >= d.Next:
		return nil, nil, &CursorError{Problem: CursorUnknownWatchers}
	}
	if ms != nil {
		// Another instance's cursor: the client has what it says, not
		// what this instance's log says.
		ms.mu.Lock()
		ms.kickConn()
		ms.markGone()
		ms.mu.Unlock()
		g.forget(ms)
	}
	ms = newMultiStream(g, id, d.owner(), d.Limit)
	sctx, cancel := context.WithCancel(context.Background())
	ms.shared = &sharedStream{store: g.store, ctx: sctx, cancel: cancel, touch: make(chan struct{}, 1),
		expire: make(chan uint64, 1), startVersion: version}
	_, _ = rand.Read(ms.shared.inst[:])
	if err := g.register(ms, authChanged); err != nil {
		cancel()
		return nil, nil, err
	}
	ms.mu.Lock()
	ms.load(d, version, c)
	ms.mu.Unlock()
	conn, err := ms.attach(0, true)
	if err != nil {
		return nil, nil, err
	}
	if c != nil && !c.hasPos {
		// Its gateway's log is not here, and the cursor does not say
		// where the watchers stand: end them all rather than resume one
		// with a gap or a duplicate.
		ms.mu.Lock()
		ms.dropPending()
		ms.end("cursor too old", true)
		ms.mu.Unlock()
	}
	return ms, conn, nil
}
