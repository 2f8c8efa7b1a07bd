package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// Streams of many watchers shared by the gateways of a deployment.
//
// Over a backend that keeps records where every gateway reads them (a
// StreamStore: backend/etcd), a stream is its record, not a gateway's
// memory: its owner, what it counts against, and each of its watchers
// (range, options, watch ID, start revision and the revision of its
// created message, whether it was deleted). Every change is a
// compare-and-swap of the record, so that watch IDs given by two gateways
// at once never collide. A gateway serving a connection of the stream
// holds an instance of it (a multiStream with shared set), made from the
// record, which follows the record (a watcher added through another
// gateway starts on it, one deleted there ends, the stream deleted there
// ends) and keeps it alive: the record is on a lease of the idle
// timeout's TTL that the serving gateway renews, so that a stream nobody
// reads is deleted by the backend once that long has passed since its
// last connection, whatever gateways died meanwhile. The message ids of
// an instance carry where each watcher stands (multistream_cursor.go), so
// that any gateway resumes the stream exactly after any message.

// StreamStore keeps the records of the streams of a deployment; the
// etcd backend is one. Records are opaque to it; versions increase with
// every change.
type StreamStore interface {
	// CreateStreamRecord stores a new record, counted against group with
	// its watchers, on a lease of ttl; false if id is taken, or w is
	// conditional and another stream's count changed since.
	CreateStreamRecord(ctx context.Context, id, group string, data []byte, w kv.StreamWatchers, ttl time.Duration) (bool, error)
	// StreamRecord returns a record and its version; nil if there is none.
	StreamRecord(ctx context.Context, id string) (data []byte, version int64, err error)
	// UpdateStreamRecord replaces a record of group still at version,
	// and its count of watchers as w says.
	UpdateStreamRecord(ctx context.Context, id, group string, data []byte, w kv.StreamWatchers, version int64) (newVersion int64, ok bool, err error)
	// DeleteStreamRecord deletes a record still at version (any when
	// 0); false if there was none, or another version.
	DeleteStreamRecord(ctx context.Context, id string, version int64) (bool, error)
	// TouchStreamRecord renews a record's lease; false if it is gone.
	TouchStreamRecord(ctx context.Context, id string) (bool, error)
	// CountStreamRecords counts the records and their watchers, in all
	// and those of group.
	CountStreamRecords(ctx context.Context, group string) (kv.StreamCounts, error)
	// FollowStreamRecord calls fn with each version of a record after
	// version (data nil once deleted) until ctx ends or fn returns false.
	FollowStreamRecord(ctx context.Context, id string, version int64, fn func(data []byte, version int64) bool) error
}

// maxStreamRecordBytes bounds a stream's record: past it, watchers are
// refused (429).
const maxStreamRecordBytes = 1 << 20

// changeRetries bounds the compare-and-swaps of one change of a record
// that others keep changing.
const changeRetries = 32

// streamDef is a stream's record.
type streamDef struct {
	User   string `json:"user,omitempty"`
	UserID []byte `json:"user_id,omitempty"` // bytes, not text: JSON would mangle them
	AuthOn bool   `json:"auth_on,omitempty"`
	// Limit is what the stream counts against (streamRegistry.perKey).
	Limit string `json:"limit"`
	// Next is the next watch ID.
	Next int64 `json:"next"`
	// Read is set once a connection read the stream: a GET without a
	// cursor is refused from then on.
	Read bool `json:"read,omitempty"`
	// Reader names the instance that last took the stream (sharedStream.name).
	Reader  string     `json:"reader,omitempty"`
	Watches []watchDef `json:"watches"`
}

// watchDef is a watcher of a record, in watch ID order.
type watchDef struct {
	ID       int64  `json:"id"`
	Key      []byte `json:"key"`
	End      []byte `json:"end"`
	PrevKV   bool   `json:"prev_kv,omitempty"`
	NoPut    bool   `json:"no_put,omitempty"`
	NoDelete bool   `json:"no_delete,omitempty"`
	Progress bool   `json:"progress,omitempty"`
	// Start is its first revision, Created the header revision of its
	// created message: fixed when it is added, so that every gateway
	// starts it alike.
	Start   int64 `json:"start"`
	Created int64 `json:"created"`
	// Deleted: canceled through the API; kept, up to as many as there
	// may be live ones, so that a resume sends its final message.
	Deleted bool `json:"deleted,omitempty"`
}

func (d *streamDef) owner() streamOwner {
	return streamOwner{user: d.User, id: string(d.UserID), authOn: d.AuthOn}
}

func (wd *watchDef) request() kv.WatchRequest {
	return kv.WatchRequest{Key: wd.Key, End: wd.End, PrevKV: wd.PrevKV, NoPut: wd.NoPut, NoDelete: wd.NoDelete, ProgressNotify: wd.Progress}
}

// live counts the watchers not deleted.
func (d *streamDef) live() int {
	n := 0
	for i := range d.Watches {
		if !d.Watches[i].Deleted {
			n++
		}
	}
	return n
}

// find returns watcher id, or nil.
func (d *streamDef) find(id int64) *watchDef {
	i, ok := slices.BinarySearchFunc(d.Watches, id, func(wd watchDef, id int64) int { return int(wd.ID - id) })
	if !ok {
		return nil
	}
	return &d.Watches[i]
}

// prune forgets the oldest deleted watchers past max of them.
func (d *streamDef) prune(max int) {
	deleted := len(d.Watches) - d.live()
	if deleted <= max {
		return
	}
	drop := deleted - max
	d.Watches = slices.DeleteFunc(d.Watches, func(wd watchDef) bool {
		if wd.Deleted && drop > 0 {
			drop--
			return true
		}
		return false
	})
}

func decodeStreamDef(data []byte) (*streamDef, error) {
	d := &streamDef{}
	if err := json.Unmarshal(data, d); err != nil {
		return nil, err
	}
	slices.SortFunc(d.Watches, func(a, b watchDef) int { return int(a.ID - b.ID) })
	return d, nil
}

// encode returns d's record, or 429 past maxStreamRecordBytes.
func (d *streamDef) encode() ([]byte, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if len(data) > maxStreamRecordBytes {
		return nil, errorf(kv.CodeTooManyRequests, "a stream's watchers take at most %d bytes to record: delete some, or make another stream", maxStreamRecordBytes)
	}
	return data, nil
}

// sharedStream is what an instance of a shared stream adds to it.
// Guarded by the stream's mu but for the fields set at its making.
type sharedStream struct {
	store  StreamStore
	inst   [8]byte // names this instance in its cursors
	ctx    context.Context
	cancel context.CancelFunc
	touch  chan struct{} // asks keepRecord to renew the lease now
	expire chan uint64   // asks keepRecord to drop the stream: idle since the arm of this generation

	startVersion int64  // the record's version it was made from
	version      int64  // the last version applied
	known        int64  // every watch ID up to it is known: absent ones are gone
	reader       string // the record's Reader
	order        []*streamWatcher
	suffix, raw  []byte // the last cursor, reused
}

// probeStart asks the backend where a watch of req starts and what
// revision its created message says, as a watcher added now would.
func (g *streamRegistry) probeStart(ctx context.Context, req kv.WatchRequest) (start, created int64, err error) {
	bw, err := g.backend.Watch(ctx, req)
	if err != nil {
		return 0, 0, err
	}
	defer bw.Close()
	return bw.StartRevision(), bw.Revision(), nil
}

// defOf returns a new watcher's record.
func (g *streamRegistry) defOf(ctx context.Context, id int64, req kv.WatchRequest) (watchDef, error) {
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
func (g *streamRegistry) defsOf(ctx context.Context, id int64, reqs []kv.WatchRequest) ([]watchDef, error) {
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

// sharedCreate makes a stream's record, with its first watchers, within
// the bounds of the deployment's streams and watchers and its owner's,
// counted in the store: their watchers are the deployment's from now on,
// whether a gateway serves them or not.
func (g *streamRegistry) sharedCreate(ctx context.Context, owner streamOwner, limitKey string, reqs []kv.WatchRequest) (string, []int64, error) {
	d := &streamDef{User: owner.user, UserID: []byte(owner.id), AuthOn: owner.authOn, Limit: limitKey, Next: int64(len(reqs)) + 1}
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
			return "", nil, errorf(kv.CodeTooManyRequests, "the deployment has %d watch streams, its most (--max-watch-streams); retry later", g.cfg.MaxStreams)
		case c.GroupStreams >= int64(g.cfg.MaxStreamsPerUser):
			return "", nil, tooManyStreamsPerUser(g.cfg.MaxStreamsPerUser)
		}
		if aerr := g.watchers.recorded(c, len(reqs)); aerr != nil {
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
	return "", nil, errStreamsBusy
}

// errStreamsBusy answers a change that lost every compare-and-swap to
// others made at the same time.
var errStreamsBusy = errorf(kv.CodeUnavailable, "the streams changed %d times while this change was made; retry", changeRetries)

// loadDef reads stream id's record for owner: errStreamNotFound when it
// has none, or it is another's.
func (g *streamRegistry) loadDef(ctx context.Context, id string, owner streamOwner) (*streamDef, int64, error) {
	data, version, err := g.store.StreamRecord(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	if data == nil {
		return nil, 0, errStreamNotFound
	}
	d, err := decodeStreamDef(data)
	if err != nil {
		return nil, 0, err
	}
	if d.owner() != owner {
		return nil, 0, errStreamNotFound
	}
	return d, version, nil
}

// changeDef applies change to stream id's record, again while another
// change comes between its read and its write, and hands the result to
// the stream's instance on this gateway, if any.
func (g *streamRegistry) changeDef(ctx context.Context, id string, owner streamOwner, change func(d *streamDef) error) error {
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
			if aerr := g.watchers.recorded(c, added); aerr != nil {
				return aerr
			}
			w.AsOf = c.AsOf
		}
		v, ok, err := g.store.UpdateStreamRecord(ctx, id, d.Limit, data, w, version)
		if err != nil {
			return err
		}
		if ok {
			if ms := g.get(id); ms != nil && ms.shared != nil {
				ms.mu.Lock()
				ms.applyDef(d, v)
				ms.mu.Unlock()
			}
			return nil
		}
	}
	return errStreamsBusy
}

// sharedAddWatch adds a watcher to stream id's record; the instance
// serving it, on whichever gateway, starts it.
func (g *streamRegistry) sharedAddWatch(ctx context.Context, id string, owner streamOwner, req kv.WatchRequest) (int64, error) {
	wd, err := g.defOf(ctx, 0, req)
	if err != nil {
		return 0, err
	}
	err = g.changeDef(ctx, id, owner, func(d *streamDef) error {
		if d.live() >= g.cfg.MaxWatchers {
			return tooManyWatchers(g.cfg.MaxWatchers)
		}
		wd.ID = d.Next
		d.Next++
		d.Watches = append(d.Watches, wd)
		d.prune(g.cfg.MaxWatchers)
		return nil
	})
	return wd.ID, err
}

// sharedCancelWatch marks a watcher of stream id's record deleted; the
// instance serving it ends it.
func (g *streamRegistry) sharedCancelWatch(ctx context.Context, id string, owner streamOwner, wid int64) error {
	return g.changeDef(ctx, id, owner, func(d *streamDef) error {
		wd := d.find(wid)
		if wd == nil || wd.Deleted {
			return errWatchNotFound
		}
		wd.Deleted = true
		d.prune(g.cfg.MaxWatchers)
		return nil
	})
}

// sharedDelete deletes stream id's record; the instance serving it ends.
func (g *streamRegistry) sharedDelete(ctx context.Context, id string, owner streamOwner) error {
	if _, _, err := g.loadDef(ctx, id, owner); err != nil {
		return err
	}
	ok, err := g.store.DeleteStreamRecord(ctx, id, 0)
	if err != nil {
		return err
	}
	if ms := g.get(id); ms != nil {
		ms.delete("stream deleted")
	}
	if !ok {
		return errStreamNotFound
	}
	return nil
}

// sharedAttach makes a connection the reader of stream id, whose record
// d at version was read for its owner, resuming after cursor c (nil:
// none), and claims the stream for this instance in the record: an
// instance reading it on another gateway ends its connection, as a newer
// connection takes a stream over on one gateway.
func (g *streamRegistry) sharedAttach(ctx context.Context, id string, d *streamDef, version int64, c *sharedCursor, authChanged <-chan struct{}) (*multiStream, *streamConn, error) {
	ms, conn, err := g.sharedOpen(ctx, id, d, version, c, authChanged)
	if err != nil {
		return nil, nil, err
	}
	if ms.isGone() {
		// Ended as it was attached (a cursor too old): the record goes too.
		_, _ = g.store.DeleteStreamRecord(ctx, id, 0)
		return ms, conn, nil
	}
	name := ms.shared.name()
	if d.Read && d.Reader == name {
		return ms, conn, nil
	}
	err = g.changeDef(ctx, id, d.owner(), func(d *streamDef) error {
		d.Read, d.Reader = true, name
		return nil
	})
	if err != nil {
		ms.detach(conn)
		return nil, nil, err
	}
	return ms, conn, nil
}

// sharedOpen attaches the connection: a cursor of this gateway's
// instance resumes from its log; one of another instance, or of a
// gateway gone, makes a new instance where the cursor says each watcher
// stands.
func (g *streamRegistry) sharedOpen(ctx context.Context, id string, d *streamDef, version int64, c *sharedCursor, authChanged <-chan struct{}) (*multiStream, *streamConn, error) {
	g.openMu.Lock()
	defer g.openMu.Unlock()
	ms := g.get(id)
	if ms != nil && ms.shared == nil {
		ms = nil
	}
	switch {
	case c == nil && ms != nil:
		conn, err := ms.attach(0, false)
		return ms, conn, err
	case c == nil && d.Read:
		return nil, nil, badRequest("this stream was read before: reconnect with Last-Event-ID (or last_event_id), the id of the last message received")
	case c != nil && !c.hasInst:
		if ms == nil {
			return nil, nil, badRequest("Last-Event-ID %d is not the id of a message of this stream", c.seq)
		}
		conn, err := ms.attach(c.seq, true)
		return ms, conn, err
	case c != nil && ms != nil && ms.shared.inst == c.inst:
		conn, err := ms.attach(c.seq, true)
		return ms, conn, err
	case c != nil && c.hasPos && c.known >= d.Next:
		return nil, nil, badRequest("Last-Event-ID names watchers this stream never had")
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

// isGone reports whether the stream is gone.
func (ms *multiStream) isGone() bool {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.gone
}

// kickConn ends the stream's connection, if any, as detach would: the
// stream is read elsewhere. The caller holds mu.
func (ms *multiStream) kickConn() {
	c := ms.conn
	if c == nil {
		return
	}
	ms.conn = nil
	close(c.kicked)
	ms.parkDeferred()
	ms.armIdle()
	ms.account()
}

// name is how the record names the instance reading the stream.
func (sh *sharedStream) name() string { return base64.RawURLEncoding.EncodeToString(sh.inst[:]) }

// load starts the watchers of record d at version, each where cursor c
// says (nil: from its start). The caller holds mu.
func (ms *multiStream) load(d *streamDef, version int64, c *sharedCursor) {
	sh := ms.shared
	sh.version, sh.reader = version, d.Reader
	sh.known = d.Next - 1
	for i := range d.Watches {
		wd := &d.Watches[i]
		state := uint64(posUncreated)
		if c != nil {
			state = c.state(wd.ID)
		}
		if state == posGone {
			continue
		}
		ms.startDef(wd, state)
	}
	ms.signalConn()
}

// applyDef brings the instance up to record d at version: watchers added
// since start, those deleted end. The caller holds mu.
func (ms *multiStream) applyDef(d *streamDef, version int64) {
	sh := ms.shared
	if ms.gone || version <= sh.version {
		return
	}
	sh.version, sh.reader = version, d.Reader
	if d.Reader != "" && d.Reader != sh.name() {
		ms.kickConn() // another gateway's connection took the stream over
	}
	known := sh.known
	sh.known = max(known, d.Next-1) // before the created messages: their cursors name them
	for i := range d.Watches {
		wd := &d.Watches[i]
		switch w := ms.watchers[wd.ID]; {
		case wd.ID > known && !wd.Deleted:
			// Ended watchers are kept until their final message is
			// confirmed, as many as there may be live ones (addWatch).
			ms.foldEnded(ms.reg.cfg.MaxWatchers)
			ms.startDef(wd, posUncreated)
		case wd.Deleted && w != nil && w.final == nil:
			ms.finish(w, "canceled", canceledPayload(ms.scratch[:0], w.id, "watch deleted"))
		}
	}
	ms.signalConn()
}

// startDef starts the watcher of wd at state (posUncreated, or its next
// revision plus posNextBase); a deleted one sends only what the client
// has not had of it: its created message, then its final one. The
// caller holds mu.
func (ms *multiStream) startDef(wd *watchDef, state uint64) {
	w := &streamWatcher{id: wd.ID, req: wd.request(), start: wd.Start, createdRev: wd.Created}
	w.req.Notify = func() { ms.notify(w) }
	created := state != posUncreated
	w.next = wd.Start
	if created {
		w.next = int64(state - posNextBase)
	}
	w.base = watcherBase{next: w.next, created: created}
	w.sent = w.base
	ms.watchers[w.id] = w
	ms.shared.order = append(ms.shared.order, w)
	ms.live++
	if !created {
		ms.emitCreated(w)
	}
	switch {
	case wd.Deleted:
		ms.finishUnwatched(w, "watch deleted")
	case ms.reg.watchers.acquire(ms.limitKey, 1) != nil:
		ms.finishUnwatched(w, "too many watchers on this gateway (--max-watchers)")
	case !ms.reg.allowed(ms, w.keys()):
		ms.reg.watchers.release(ms.limitKey, 1)
		ms.finishUnwatched(w, "permission denied")
	default:
		if err := ms.watch(w, w.next); err != nil {
			ms.reg.watchers.release(ms.limitKey, 1)
			ms.finishUnwatched(w, cancelReason(err))
		}
	}
}

// finishUnwatched ends a watcher that has no backend watch and holds no
// count against --max-watchers with a canceled message, as finish does.
// The caller holds mu.
func (ms *multiStream) finishUnwatched(w *streamWatcher, reason string) {
	w.final = &streamFinal{event: "canceled", payload: canceledPayload(nil, w.id, reason)}
	ms.live--
	ms.ended++
	ms.emitFinal(w)
}

// followRecord applies each change of the stream's record, made through
// any gateway, until the stream is gone here; the record deleted (through
// another gateway, or by its lease's expiry) ends it.
func (ms *multiStream) followRecord() {
	defer ms.reg.wg.Done()
	sh := ms.shared
	_ = sh.store.FollowStreamRecord(sh.ctx, ms.id, sh.startVersion, func(data []byte, version int64) bool {
		ms.mu.Lock()
		defer ms.mu.Unlock()
		if ms.gone {
			return false
		}
		if data == nil {
			ms.end("stream deleted", false)
			return false
		}
		if d, err := decodeStreamDef(data); err == nil {
			ms.applyDef(d, version)
		}
		return true
	})
}

// keepRecord renews the lease of the stream's record while a connection
// of this gateway reads it, and once more when one ends, so that the
// record goes IdleTimeout after the last connection, until the stream is
// gone here.
func (ms *multiStream) keepRecord() {
	defer ms.reg.wg.Done()
	sh := ms.shared
	t := time.NewTicker(max(ms.reg.cfg.IdleTimeout/6, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-sh.ctx.Done():
			return
		case <-sh.touch:
		case gen := <-sh.expire:
			ms.dropIdle(gen)
			continue
		case <-t.C:
			ms.mu.Lock()
			reading := ms.conn != nil
			ms.mu.Unlock()
			if !reading {
				continue
			}
		}
		alive, err := sh.store.TouchStreamRecord(sh.ctx, ms.id)
		if err == nil && !alive {
			ms.mu.Lock()
			ms.end("stream deleted", false)
			ms.mu.Unlock()
			return
		}
	}
}

// dropIdle drops the stream, idle since the arm of generation gen: its
// record too if this instance was the last to read it and nothing changed
// it since (else the record's lease, or the instance now reading it,
// decides).
func (ms *multiStream) dropIdle(gen uint64) {
	sh := ms.shared
	ms.mu.Lock()
	idle := !ms.gone && ms.conn == nil && ms.idleGen == gen
	mine, version := sh.reader == sh.name(), sh.version
	ms.mu.Unlock()
	if !idle {
		return
	}
	if mine {
		_, _ = sh.store.DeleteStreamRecord(sh.ctx, ms.id, version)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if !ms.gone && ms.conn == nil && ms.idleGen == gen {
		ms.markGone()
		ms.reg.forget(ms)
	}
}

// touchRecord asks keepRecord to renew the record's lease now. The caller
// holds mu.
func (ms *multiStream) touchRecord() {
	if ms.shared == nil {
		return
	}
	select {
	case ms.shared.touch <- struct{}{}:
	default:
	}
}
