package mvcc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// Defaults for Options fields left zero.
const (
	DefaultQuotaBytes           int64 = 2 << 30
	DefaultMaxTxnOps                  = 128
	DefaultCompactionBatchLimit       = 1000
	// maxBatchRequests bounds how many write requests share one commit, so
	// that one fsync never waits for an unbounded amount of work.
	maxBatchRequests = 4096
)

// Lessor is what the store needs from a lease manager. The store calls
// Lookup and Keys from its committer goroutine, while a write runs, and
// Attach and Detach from the same goroutine once the batch that moved a
// key between leases has been committed (see Stage), and for every leased
// key when it recovers on Open.
type Lessor interface {
	// Lookup reports whether the lease exists as the open batch sees it:
	// granted by a committed write or by an earlier write of the batch,
	// and not revoked by one.
	Lookup(id int64) bool
	// Keys returns the keys attached to the lease by committed writes;
	// LeaseKeys adds what the open batch changed.
	Keys(id int64) ([][]byte, error)
	Attach(id int64, key []byte)
	Detach(id int64, key []byte)
}

// Options tune a Store: numbers and switches only. What the store works
// with (its lessor, its committer) is given to Open.
type Options struct {
	// NoFsync skips fsync on commit. Acknowledged writes can be lost on a
	// crash: for tests and benchmarks only.
	NoFsync bool
	// QuotaBytes is the backend size above which the NOSPACE alarm is
	// raised. Zero means DefaultQuotaBytes.
	QuotaBytes int64
	// MaxTxnOps bounds the compares and the ops of each branch of a txn.
	// Zero means DefaultMaxTxnOps.
	MaxTxnOps int
	// CompactionBatchLimit bounds how many revisions one backend commit of
	// a compaction deletes. Zero means DefaultCompactionBatchLimit.
	CompactionBatchLimit int
	// ReadOnly opens an existing file without changing it (not even to
	// replay its write-ahead log, whose batches it reads from memory, or
	// to finish a compaction a crash cut short): reads, Check and
	// Snapshot work (Snapshot not while the log holds batches the file
	// lacks), every write fails with ErrReadOnly. Tools inspecting a
	// file use it; several read-only stores may share one file.
	ReadOnly bool
}

// Store is the multi-version key-value store. All methods are safe for
// concurrent use.
type Store struct {
	opts Options
	path string
	// lessor validates and tracks the leases of puts; nil for none.
	lessor Lessor
	// committer commits each batch; nil commits directly.
	committer Committer

	index *treeIndex

	// mu orders readers against compaction and defrag: a read holds RLock
	// from its compact-revision check to its last bbolt lookup, so once
	// compactRev is raised under Lock no read below it is in flight, and
	// defrag can swap db under Lock. Lock order: mu, then index.mu.
	mu         sync.RWMutex
	db         *bolt.DB // guarded by mu; replaced by Defrag
	compactRev int64    // guarded by mu; written only by the committer, after the commit that makes it durable

	// snapMu guards the bookkeeping of open snapshots, which read a
	// bbolt handle without holding mu: pinned counts them per handle, and
	// retired holds the handles Defrag replaced while snapshots still
	// read them; the last snapshot of a retired handle closes it. Lock
	// order: mu, then snapMu.
	snapMu  sync.Mutex
	pinned  map[*bolt.DB]int
	retired map[*bolt.DB]bool
	// snapshots counts open snapshots so that Close can wait for them;
	// stopSnapshots, closed by Close, makes those still streaming stop.
	snapshots     sync.WaitGroup
	stopSnapshots chan struct{}

	// readMu guards the read transaction reads share (see sharedRead),
	// and committing, set while the committer commits. Lock order: mu,
	// then readMu; nothing is waited for while it is held.
	readMu     sync.Mutex
	shared     *sharedRead
	committing bool

	// wal is the write-ahead log (nil when ReadOnly); openTx is the
	// write transaction holding the batches acknowledged from it since
	// the last checkpoint (nil for none), checkpointAt when the next
	// checkpoint is due; all three owned by the committer. pending holds
	// those batches' history records for reads (see records): replaced,
	// never changed in place, beyond its length.
	wal          *wal
	openTx       *bolt.Tx
	checkpointAt time.Time
	// checkpointEvery is checkpointInterval; tests lengthen it.
	checkpointEvery time.Duration
	pendingRecs     []walRecord
	// checkpointFirst makes the next batch a checkpoint: the log's base
	// is not the store's revision yet (see startWAL).
	checkpointFirst bool
	// unreplayed are the records of a log the file could not take on
	// Open (see beginWrite); owned by the committer.
	unreplayed []walRecord
	pending    atomic.Pointer[[]walRecord]

	// committedRev is the newest revision known durable: reads see it.
	committedRev atomic.Int64

	// currentRev is the newest revision applied to the open batch; owned by
	// the committer goroutine.
	currentRev int64

	alarmNoSpace atomic.Bool
	dbSize       atomic.Int64
	dbSizeInUse  atomic.Int64
	failed       atomic.Pointer[error]

	queue chan *request
	// closeMu makes Close wait for callers that passed the closed check
	// and may still send on queue.
	closeMu sync.RWMutex
	closed  bool

	// batchBytes approximates what the open batch adds to the backend;
	// owned by the committer.
	batchBytes int64
	// The open batch's view of staged state (see Stage), owned by the
	// committer and reset after each batch: the lease moves of its
	// successful requests, and the compact revision one of them set (0
	// for none).
	batchMoves       []leaseMove
	stagedCompactRev int64

	// observers are told of every committed batch (see Observe); owned
	// by the committer, which alone appends to them and calls them.
	observers []Observer

	compactions chan compactionJob
	stopCompact chan struct{}
	compactDone chan struct{}
	commitDone  chan struct{}
	closeOnce   sync.Once
}

// Open opens (creating if needed) the store in the bbolt file at path,
// rebuilds the index from it and finishes a compaction a crash cut short.
//
// le validates and tracks the leases keys are put with, and is given the
// leased keys the file holds; with none (nil) a put with a lease fails
// with kv.ErrLeaseNotFound. c commits each batch (see Committer): the
// fault tests' seam around the commit; nil commits directly.
func Open(path string, le Lessor, c Committer, opts Options) (*Store, error) {
	if opts.QuotaBytes <= 0 {
		opts.QuotaBytes = DefaultQuotaBytes
	}
	if opts.MaxTxnOps <= 0 {
		opts.MaxTxnOps = DefaultMaxTxnOps
	}
	if opts.CompactionBatchLimit <= 0 {
		opts.CompactionBatchLimit = DefaultCompactionBatchLimit
	}
	if !opts.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("mvcc: create data dir: %w", err)
		}
	}
	db, err := openBolt(path, opts)
	if err != nil {
		return nil, err
	}
	if !opts.ReadOnly {
		removeDefragCopy(path)
	}
	s := &Store{
		opts:            opts,
		path:            path,
		lessor:          le,
		committer:       c,
		index:           newTreeIndex(),
		db:              db,
		pinned:          make(map[*bolt.DB]int),
		retired:         make(map[*bolt.DB]bool),
		stopSnapshots:   make(chan struct{}),
		queue:           make(chan *request, 1024),
		compactions:     make(chan compactionJob, 16),
		stopCompact:     make(chan struct{}),
		compactDone:     make(chan struct{}),
		commitDone:      make(chan struct{}),
		checkpointEvery: checkpointInterval,
	}
	if opts.ReadOnly {
		// The data directory of a server that was killed: the batches
		// of its log are read too, from memory; neither file changes.
		if f, err := os.Open(path + walSuffix); err == nil {
			if recs, _ := readWAL(db, &wal{f: f}); recs != nil {
				s.pendingRecs = recs
				p := recs[:len(recs):len(recs)]
				s.pending.Store(&p)
			}
			f.Close()
		}
	}
	if !opts.ReadOnly {
		if s.wal, err = openWAL(path+walSuffix, opts.NoFsync); err != nil {
			db.Close()
			return nil, err
		}
		// Batches acknowledged from the log and not checkpointed: read
		// as pending records, checked with the history by restore, and
		// only then committed to the file, so that a file Open refuses
		// is left as it was. Until they are in it, the log goes on
		// after them.
		if recs, end := readWAL(db, s.wal); recs != nil {
			s.unreplayed, s.pendingRecs = recs, recs
			p := recs[:len(recs):len(recs)]
			s.pending.Store(&p)
			s.wal.off = end
		}
	}
	scheduled, err := s.restore()
	if err == nil && s.wal != nil {
		// A full disk keeps the records unreplayed (see beginWrite).
		if s.unreplayed == nil || s.replayUnreplayed() == nil {
			err = s.startWAL()
		}
	}
	if err != nil {
		if s.wal != nil {
			s.wal.close()
		}
		db.Close()
		return nil, err
	}
	s.updateSize()
	go s.commitLoop()
	go s.compactLoop()
	if scheduled > 0 && !opts.ReadOnly {
		// A compaction was scheduled but not finished: finish it.
		s.compactions <- newCompactionJob(scheduled)
	}
	return s, nil
}

// Rev returns the current revision: the newest durable one.
func (s *Store) Rev() int64 { return s.committedRev.Load() }

// CompactRev returns the compact revision: reads below it fail.
func (s *Store) CompactRev() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.compactRev
}

// Path returns the bbolt file the store lives in.
func (s *Store) Path() string { return s.path }

// Close stops accepting requests, finishes those already queued, stops the
// compactor (an unfinished compaction resumes on the next Open), makes
// open snapshots fail with ErrClosed at their next chunk and waits until
// they are closed, and closes the file. It is safe to call more than once.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.closeMu.Lock()
		s.closed = true
		s.closeMu.Unlock()
		close(s.stopSnapshots)
		close(s.stopCompact)
		<-s.compactDone
		close(s.queue)
		<-s.commitDone
		// Snapshots stop at their next chunk; their owners close them.
		s.snapshots.Wait()
		s.mu.Lock()
		s.dropSharedRead()
		err = s.db.Close()
		if s.wal != nil {
			err = errors.Join(err, s.wal.close())
		}
		s.mu.Unlock()
	})
	return err
}

// Failed returns the error that made the store refuse writes, or nil.
func (s *Store) Failed() error {
	if p := s.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// errFailed wraps the cause of a backend failure.
func (s *Store) fail(cause error) error {
	err := fmt.Errorf("%w: %w", kv.ErrBackendFailed, cause)
	s.failed.CompareAndSwap(nil, &err)
	return *s.failed.Load()
}
