package watch

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// Defaults for Options fields left zero.
const (
	DefaultProgressInterval = 10 * time.Minute
	DefaultSyncInterval     = 100 * time.Millisecond
	DefaultVictimInterval   = 10 * time.Millisecond
	DefaultMaxSyncWatchers  = 512
	DefaultQueueLimit       = 4096
	DefaultQueueBytes       = 1 << 20
	DefaultMaxPendingBytes  = 256 << 20
	// victimBatchLimit: a victim holds the revision it could not take in
	// memory only up to this many events (and within QueueBytes); a
	// larger one is dropped and replayed from history instead.
	victimBatchLimit = 1024
)

// Options configure a Store.
type Options struct {
	// ProgressInterval: a watcher that asked for progress and has been
	// idle this long gets a progress response.
	ProgressInterval time.Duration
	// SyncInterval: how often unsynced watchers are caught up when nothing
	// else wakes the sync loop.
	SyncInterval time.Duration
	// VictimInterval: how often delivery to victims is retried.
	VictimInterval time.Duration
	// MaxSyncWatchers bounds the watchers one sync pass serves.
	MaxSyncWatchers int
	// QueueLimit bounds the events queued, undelivered, per watcher. Past
	// it, a watcher stops holding events in memory and is replayed from
	// history once its reader catches up.
	QueueLimit int
	// QueueBytes bounds the bytes of events held per watcher: queued,
	// taken by its reader and not yet released (see Stream.Release), and
	// held for it as a victim. Past it, as past QueueLimit, the watcher
	// is replayed from history, so that a reader stalled across a
	// compaction ends with a compacted response instead of the store
	// holding every revision for it. One revision larger than the bound
	// still goes through to a watcher holding nothing, within
	// MaxPendingBytes. Zero means DefaultQueueBytes.
	QueueBytes int64
	// MaxPendingBytes bounds what the store holds for all its watchers
	// together: queued, taken by readers and not yet released, and held
	// for victims, what several watchers hold together (the keys and
	// values of a revision they all take) counted once, and what is a
	// watcher's own (its slice of the events, previous versions loaded
	// for it) for each. Once it would be passed, no watcher is given
	// anything more in memory, whatever it holds: it is replayed from
	// history once the store has room, as past QueueBytes, so that a
	// crowd of stalled readers, each holding nothing, cannot each take
	// one revision more. Only when the store holds nothing at all does a
	// revision larger than the bound go through. Zero means
	// DefaultMaxPendingBytes.
	MaxPendingBytes int64
}

// History is where the scheduler catches watchers up from: the record of
// past revisions of whatever publishes them. The embedded store's is its
// mvcc.Store; a gateway's is a window of recent revisions in memory over
// its etcd cluster.
type History interface {
	// ReadHistory calls fn with the events of revisions from to to,
	// oldest first, each revision's in the order they were written, from
	// one consistent view, until fn returns false; when from is below the
	// view's compact revision it starts there instead. It returns that
	// compact revision: a watcher needing history below it gets a
	// compacted response.
	ReadHistory(from, to int64, fn func(kv.Event) bool) (compactRev int64, err error)
	// FillPrevKVs sets each event's PrevKV to the key's version at the
	// revision before it (nil when the key did not exist), and returns
	// how many it filled: it stops at the first event whose previous
	// version is below the compact revision, with a *kv.CompactedError.
	FillPrevKVs(events []*kv.Event) (filled int, err error)
}

// Store is the watch scheduler. It knows nothing of where revisions come
// from: they are published to it, in order (Publish), by the store's
// commit point or by an upstream watch, and it delivers each to the
// watchers that match it, whole revisions at a time, after they are
// durable.
//
// Watchers live in one of three groups. Synced watchers are caught up and
// receive events as revisions are published. Unsynced watchers are
// behind (they started in the past, or fell behind) and are caught up
// from the History by the sync loop. Victims could not take a revision
// when it was published; they keep that revision's events and the victim
// loop retries. Publishing never blocks on a reader.
type Store struct {
	history History
	opts    Options

	// mu guards the groups, the watchers' group fields and notifiedRev.
	// Lock order: mu, then a watcher's mu.
	mu          sync.Mutex
	synced      *watcherGroup
	unsynced    watcherSet
	victims     map[*watcher]victim
	all         watcherSet
	progressing watcherSet // watchers that asked for periodic progress
	// progressPending holds the watchers owed an on-demand progress
	// response once they catch up.
	progressPending watcherSet
	// notifiedRev is the newest revision offered to synced watchers; every
	// revision up to it has been.
	notifiedRev int64
	closed      bool

	pendingEvents atomic.Int64
	// pendingBytes is what the store holds for watchers (queued, held
	// by readers, held for victims), bounded by Options.MaxPendingBytes.
	pendingBytes atomic.Int64
	eventsSent   atomic.Int64
	// evictions counts the watchers given back what was queued for them
	// because their readers were not taking it (evictStalled).
	evictions atomic.Int64
	// crowded is set when a response found no room within
	// MaxPendingBytes, and cleared by evictStalled.
	crowded atomic.Bool

	syncKick chan struct{}
	// fills holds a token for each reader loading previous versions
	// (see maxFills).
	fills    chan struct{}
	stop     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once

	// waking lists the watchers Publish has queued responses for, to be
	// signalled once it has queued them all (under mu).
	waking []*watcher
	// matched is where notify lists the watchers of one event, kept
	// between revisions (under mu).
	matched []*watcher
	// notes calls the watches' Notify functions outside the store's
	// locks.
	notes *notes

	// readBuf and batchBuf are the sync loop's, kept between passes: the
	// page read from the history, and the response being gathered for
	// one watcher (under mu).
	readBuf, batchBuf []kv.Event

	// hooks are called at each step of a sync pass; tests set them to
	// force interleavings with compaction.
	hooks syncHooks
}

type syncHooks struct {
	afterChoose, afterRead, afterSend func()
}

// New returns a scheduler at revision rev (every revision up to it was
// published before: a watch from now starts after it) that catches
// watchers up from h, and starts its sync, victim and progress loops.
// Close stops them.
func New(h History, rev int64, opts Options) *Store {
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	if opts.SyncInterval <= 0 {
		opts.SyncInterval = DefaultSyncInterval
	}
	if opts.VictimInterval <= 0 {
		opts.VictimInterval = DefaultVictimInterval
	}
	if opts.MaxSyncWatchers <= 0 {
		opts.MaxSyncWatchers = DefaultMaxSyncWatchers
	}
	if opts.QueueLimit <= 0 {
		opts.QueueLimit = DefaultQueueLimit
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	if opts.MaxPendingBytes <= 0 {
		opts.MaxPendingBytes = DefaultMaxPendingBytes
	}
	s := &Store{
		history:         h,
		opts:            opts,
		synced:          newWatcherGroup(),
		unsynced:        make(watcherSet),
		victims:         make(map[*watcher]victim),
		all:             make(watcherSet),
		progressing:     make(watcherSet),
		progressPending: make(watcherSet),
		notifiedRev:     rev,
		syncKick:        make(chan struct{}, 1),
		fills:           make(chan struct{}, maxFills),
		stop:            make(chan struct{}),
		notes:           newNotes(),
	}
	s.wg.Add(3)
	go s.syncLoop()
	go s.victimLoop()
	go s.progressLoop()
	return s
}

// Watch starts a watcher.
func (s *Store) Watch(r kv.WatchRequest) (*Stream, error) {
	if len(r.Key) == 0 {
		return nil, kv.Invalidf("empty key")
	}
	if r.StartRevision < 0 {
		return nil, kv.Invalidf("negative start revision")
	}
	w := &watcher{
		prevKV:   r.PrevKV,
		noPut:    r.NoPut,
		noDelete: r.NoDelete,
		progress: r.ProgressNotify,
		notify:   r.Notify,
		notes:    s.notes,
	}
	if w.notify == nil {
		w.ready = make(chan struct{}, 1)
	}
	w.r = keyrange.Range{Key: clone(r.Key)}
	if len(r.End) > 0 {
		w.r.End = clone(r.End)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, kv.ErrClosed
	}
	start := r.StartRevision
	if start == 0 {
		start = s.notifiedRev + 1
	}
	w.next = start
	w.lastSent = time.Now().UnixNano()
	if start > s.notifiedRev {
		w.group = groupSynced
		s.synced.add(w)
	} else {
		w.group = groupUnsynced
		s.unsynced[w] = struct{}{}
		s.kickSync()
	}
	s.all[w] = struct{}{}
	if w.progress {
		s.progressing[w] = struct{}{}
	}
	return &Stream{s: s, w: w, start: start, rev: s.notifiedRev}, nil
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// remove takes w out of every group; the caller holds mu.
func (s *Store) remove(w *watcher) {
	switch w.group {
	case groupSynced:
		s.synced.remove(w)
	case groupUnsynced:
		delete(s.unsynced, w)
	case groupVictim:
		s.unhold(s.victims[w].c)
		delete(s.victims, w)
	}
	w.group = groupNone
	delete(s.all, w)
	delete(s.progressing, w)
	delete(s.progressPending, w)
}

// cancel removes w and ends it with a canceled response.
func (s *Store) cancel(w *watcher) {
	s.mu.Lock()
	s.remove(w)
	s.mu.Unlock()
	w.finish(kv.WatchResponse{Canceled: true})
}

// requestProgress queues a progress response for w now if it is caught up,
// or once it is.
func (s *Store) requestProgress(w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.group == groupSynced && w.next <= s.notifiedRev+1 {
		s.sendProgress(w)
		return
	}
	if w.group != groupNone {
		s.progressPending[w] = struct{}{}
	}
}

// sendProgress queues a bookmark at notifiedRev for a synced watcher: every
// event up to it was queued before. The caller holds mu.
func (s *Store) sendProgress(w *watcher) {
	delete(s.progressPending, w)
	w.lastSent = time.Now().UnixNano()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.queue = append(w.queue, kv.WatchResponse{Revision: s.notifiedRev, Progress: true})
	w.signal()
}

// becomeSynced moves a caught-up watcher into the synced group. The caller
// holds mu.
func (s *Store) becomeSynced(w *watcher) {
	w.group = groupSynced
	s.synced.add(w)
	if _, ok := s.progressPending[w]; ok && w.next <= s.notifiedRev+1 {
		s.sendProgress(w)
	}
}

// kickSync wakes the sync loop.
func (s *Store) kickSync() {
	select {
	case s.syncKick <- struct{}{}:
	default:
	}
}

// Close stops the loops and ends every watcher with a canceled response
// whose reason is "shutting down". It does not close the wrapped store.
// It is safe to call more than once.
func (s *Store) Close() {
	s.stopOnce.Do(func() {
		close(s.stop)
		s.wg.Wait()
		s.mu.Lock()
		s.closed = true
		ws := make([]*watcher, 0, len(s.all))
		for w := range s.all {
			ws = append(ws, w)
		}
		for _, w := range ws {
			s.remove(w)
		}
		s.mu.Unlock()
		for _, w := range ws {
			w.finish(kv.WatchResponse{Canceled: true, CancelReason: "shutting down"})
		}
		s.notes.stop() // after the watchers' last signals
	})
}
