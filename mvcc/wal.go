package mvcc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// The write-ahead log beside the bbolt file (its path plus walSuffix).
//
// A batch of writes is acknowledged once its records are in the log:
// one write and one fdatasync, where a bbolt commit costs three writes
// and two. bbolt catches up in checkpoints (Store.checkpoint), which
// commit the write transaction the committer kept open across the
// batches since the last one, and then rewind the log.
//
// The log is a sequence of frames, each a 4-byte length, the CRC-32C of
// the payload and the payload. The first frame names the base: the
// revision of the checkpoint the log follows and a random id the
// checkpoint drew, which it also records in the meta bucket. Every later
// frame is one batch: the history records it wrote, their revisions
// following each other from base+1 on. Replay (on Open) reads frames while their CRC holds and
// their revisions follow; the first that does not ends the log, so a
// torn last frame, and whatever an earlier, longer run of the log left
// beyond the current one, are never read. A log whose base is not the
// file's checkpoint (the file was replaced: a restored backup) is not
// replayed.
//
// With fsync on, the file is preallocated with zeros once: a write into
// allocated blocks changes no metadata, so fdatasync writes the data
// alone, without a journal commit of the file system.
const (
	walSuffix = ".wal"
	// walBytes is the log's size: a batch that would not fit makes a
	// checkpoint instead (so does a batch over a quarter of it). It also
	// bounds the memory the records not yet checkpointed hold, twice over
	// with bbolt's nodes of the open write transaction.
	walBytes = 1 << 20
	// walFrameHeader is a frame's length and CRC.
	walFrameHeader = 8

	frameBase  byte = 'B'
	frameBatch byte = 'W'
)

var walCRC = crc32.MakeTable(crc32.Castagnoli)

// wal is the open log. Only the committer uses it after Open.
type wal struct {
	f      *os.File
	path   string
	noSync bool
	off    int64  // where the next frame goes
	buf    []byte // the frame being built, reused
	// lazyBase is a base not yet written: the log holds no batch since
	// the base frame it has (whose base no longer matches the file's
	// checkpoint, so it is not replayed), and the next batch writes the
	// new base frame with it, sparing a checkpoint that logged nothing a
	// write and an fdatasync.
	lazyBase checkpointMark
	lazy     bool
	batches  int // batches written since the last base frame
}

// walRecord is one history record: its bbolt key and value.
type walRecord struct {
	key, value []byte
}

// openWAL opens the log at path, creating it (preallocated unless noSync)
// if needed. It does not read it: see replay.
func openWAL(path string, noSync bool) (*wal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("mvcc: open log: %w", err)
	}
	w := &wal{f: f, path: path, noSync: noSync}
	if !noSync {
		if err := w.preallocate(); err != nil {
			f.Close()
			return nil, err
		}
	}
	return w, nil
}

// preallocate fills the file with zeros up to walBytes, once, and makes
// that and its directory entry durable.
func (w *wal) preallocate() error {
	st, err := w.f.Stat()
	if err != nil {
		return fmt.Errorf("mvcc: log: %w", err)
	}
	if st.Size() >= walBytes {
		return nil
	}
	zeros := make([]byte, 1<<20)
	for off := st.Size(); off < walBytes; off += int64(len(zeros)) {
		n := min(int64(len(zeros)), walBytes-off)
		if _, err := w.f.WriteAt(zeros[:n], off); err != nil {
			// No room (a small or full disk): the log grows as it is
			// written instead, each fdatasync then writing its size too.
			if terr := w.f.Truncate(st.Size()); terr != nil {
				return fmt.Errorf("mvcc: preallocate log: %w", errors.Join(err, terr))
			}
			break
		}
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("mvcc: sync log: %w", err)
	}
	return syncDir(filepath.Dir(w.path))
}

func (w *wal) close() error { return w.f.Close() }

// room reports whether a batch of n record bytes fits after what the
// log holds.
func (w *wal) room(n int) bool {
	return n <= walBytes/4 && w.off+int64(n)+96 <= walBytes
}

// rewind starts the log over after the checkpoint base: one base frame,
// then a zero header that ends the log until the next batch overwrites
// it. Durable when it returns (unless noSync).
func (w *wal) rewind(base checkpointMark) error {
	w.buf = w.appendBaseFrame(w.buf[:0], base)
	n := len(w.buf)
	w.buf = append(w.buf, make([]byte, walFrameHeader)...)
	if _, err := w.f.WriteAt(w.buf, 0); err != nil {
		return fmt.Errorf("mvcc: rewind log: %w", err)
	}
	w.off, w.batches, w.lazy = int64(n), 0, false
	return w.sync()
}

// rewindLazily is rewind after a checkpoint: with no batch logged since
// the last base frame, the new base is written with the next batch.
func (w *wal) rewindLazily(base checkpointMark) error {
	if w.batches > 0 {
		return w.rewind(base)
	}
	w.lazyBase, w.lazy = base, true
	return nil
}

// appendBaseFrame appends a base frame to b.
func (w *wal) appendBaseFrame(b []byte, base checkpointMark) []byte {
	start := len(b)
	b = append(b, make([]byte, walFrameHeader)...)
	b = append(b, frameBase)
	b = binary.BigEndian.AppendUint64(b, uint64(base.rev))
	b = binary.BigEndian.AppendUint64(b, base.id)
	seal(b[start:])
	return b
}

// appendBatch writes one batch's records as a frame, and syncs it.
func (w *wal) appendBatch(recs []walRecord) error {
	at := w.off
	w.buf = w.buf[:0]
	if w.lazy {
		at = 0
		w.buf = w.appendBaseFrame(w.buf, w.lazyBase)
	}
	start := len(w.buf)
	w.buf = append(w.buf, make([]byte, walFrameHeader)...)
	w.buf = append(w.buf, frameBatch)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(recs)))
	for _, r := range recs {
		w.buf = binary.AppendUvarint(w.buf, uint64(len(r.key)))
		w.buf = append(w.buf, r.key...)
		w.buf = binary.AppendUvarint(w.buf, uint64(len(r.value)))
		w.buf = append(w.buf, r.value...)
	}
	seal(w.buf[start:])
	n := len(w.buf)
	// The zero header after the frame ends the log there, whatever an
	// earlier run left beyond it.
	w.buf = append(w.buf, make([]byte, walFrameHeader)...)
	if _, err := w.f.WriteAt(w.buf, at); err != nil {
		return fmt.Errorf("mvcc: append to log: %w", err)
	}
	w.off, w.lazy = at+int64(n), false
	w.batches++
	return w.sync()
}

// seal fills in the header of the frame that is all of frame.
func seal(frame []byte) {
	payload := frame[walFrameHeader:]
	binary.BigEndian.PutUint32(frame[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(frame[4:8], crc32.Checksum(payload, walCRC))
}

func (w *wal) sync() error {
	if w.noSync {
		return nil
	}
	if err := fdatasync(w.f); err != nil {
		return fmt.Errorf("mvcc: sync log: %w", err)
	}
	return nil
}

// errWALEnd ends a replay at the first frame that is not part of the log.
var errWALEnd = errors.New("end of log")

// replay reads the log: its base, then every batch's records, in order,
// while the frames are whole and their revisions follow the base. fn is
// called once per batch, with records of a buffer of the batch's own. A
// log with no base frame (new, or zeroed) has base revision -1. end is
// the offset after the last batch read. A base frame of a log written
// before checkpoints had ids (the revision alone) has id 0.
func (w *wal) replay(fn func(recs []walRecord)) (base checkpointMark, end int64) {
	r := io.NewSectionReader(w.f, 0, 1<<62)
	var off int64
	next := func() ([]byte, error) {
		var hdr [walFrameHeader]byte
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return nil, errWALEnd
		}
		n := binary.BigEndian.Uint32(hdr[0:4])
		if n == 0 || n > walBytes {
			return nil, errWALEnd
		}
		payload := make([]byte, n)
		if _, err := r.ReadAt(payload, off+walFrameHeader); err != nil {
			return nil, errWALEnd
		}
		if crc32.Checksum(payload, walCRC) != binary.BigEndian.Uint32(hdr[4:8]) {
			return nil, errWALEnd
		}
		off += walFrameHeader + int64(n)
		return payload, nil
	}
	p, err := next()
	if err != nil || (len(p) != 9 && len(p) != 17) || p[0] != frameBase {
		return checkpointMark{rev: -1}, 0
	}
	base.rev = int64(binary.BigEndian.Uint64(p[1:9]))
	if len(p) == 17 {
		base.id = binary.BigEndian.Uint64(p[9:])
	}
	last := base.rev
	for {
		end = off
		p, err := next()
		if err != nil {
			return base, end
		}
		recs, first, lastOfBatch, ok := decodeBatchFrame(p)
		if !ok || first != last+1 {
			return base, end
		}
		fn(recs)
		last = lastOfBatch
	}
}

// decodeBatchFrame decodes a batch frame's records and the first and
// last main revisions they hold; ok is false for anything malformed.
func decodeBatchFrame(p []byte) (recs []walRecord, first, last int64, ok bool) {
	if len(p) < 2 || p[0] != frameBatch {
		return nil, 0, 0, false
	}
	p = p[1:]
	n, k := binary.Uvarint(p)
	if k <= 0 || n == 0 || n > uint64(len(p)) {
		return nil, 0, 0, false
	}
	p = p[k:]
	recs = make([]walRecord, 0, n)
	field := func() ([]byte, bool) {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return nil, false
		}
		b := p[k : k+int(l)]
		p = p[k+int(l):]
		return b, true
	}
	prev := int64(-1)
	for range n {
		key, ok1 := field()
		value, ok2 := field()
		if !ok1 || !ok2 {
			return nil, 0, 0, false
		}
		rev, _, err := parseRevBytes(key)
		if err != nil || rev.Main < prev || rev.Main > prev+1 && prev >= 0 {
			return nil, 0, 0, false
		}
		if prev < 0 {
			first = rev.Main
		}
		prev = rev.Main
		recs = append(recs, walRecord{key: key, value: value})
	}
	return recs, first, prev, len(p) == 0
}

// readWAL returns the records of the batches the log holds beyond the
// file's checkpoint, and where the log ends after them. A log whose base
// is not the file's checkpoint (its revision and its id), or behind the
// file's newest record, belongs to another file or another run (a backup
// put in its place, a binary without the log that wrote on) and is not
// read: nil.
func readWAL(db *bolt.DB, w *wal) (recs []walRecord, end int64) {
	base, end := w.replay(func(batch []walRecord) {
		recs = append(recs, batch...)
	})
	if len(recs) == 0 {
		return nil, 0
	}
	var checkpoint checkpointMark
	var newest int64
	_ = db.View(func(tx *bolt.Tx) error {
		checkpoint = readCheckpoint(tx.Bucket(metaBucket))
		if k, _ := tx.Bucket(keyBucket).Cursor().Last(); k != nil {
			rev, _, _ := parseRevBytes(k)
			newest = rev.Main
		}
		return nil
	})
	if checkpoint != base || newest > base.rev {
		return nil, 0
	}
	return recs, end
}

// replayUnreplayed commits the records Open read from the log to the
// file, once restore has checked them with the rest of the history. On
// a full disk it fails, and they stay pending and unreplayed: the first
// write transaction puts them back in (see beginWrite).
func (s *Store) replayUnreplayed() error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		keys := tx.Bucket(keyBucket)
		keys.FillPercent = 0.9
		for _, r := range s.unreplayed {
			if err := keys.Put(r.key, r.value); err != nil {
				return err
			}
		}
		_, err := putCheckpoint(tx.Bucket(metaBucket), s.currentRev)
		return err
	})
	if err != nil {
		return err
	}
	s.unreplayed, s.pendingRecs = nil, nil
	s.pending.Store(nil)
	return nil
}

// startWAL starts the log over, once Open has replayed it and rebuilt
// the index, from the file's checkpoint. Open changes nothing in the
// file itself (a store it refuses later is left as it was); the first
// batch is committed to the file, a checkpoint, before any is logged:
// the log's batches then follow a checkpoint this run drew, never one
// that another copy of the file holds (a snapshot restored, a file
// copied, a file written before checkpoints had ids or before the log
// existed).
func (s *Store) startWAL() error {
	var checkpoint checkpointMark
	_ = s.db.View(func(tx *bolt.Tx) error {
		checkpoint = readCheckpoint(tx.Bucket(metaBucket))
		return nil
	})
	s.checkpointFirst = true
	return s.wal.rewind(checkpoint)
}
