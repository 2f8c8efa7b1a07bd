// Package wal is an append-only log of write groups, for a store that
// wants to acknowledge a group once it is on disk without waiting for its
// own, costlier commit: the store appends the group as one record, syncs
// the log (one fdatasync of an append), acknowledges, and commits its
// data file later, in the background; once that commit is durable it
// resets the log. On open the log reads back every record that reached
// the disk, so that the store can replay those its data file does not
// hold yet.
//
// A record is a 12-byte header, the payload's length, a CRC-32C of the
// length and a CRC-32C of the payload (all little-endian), and the
// payload. The length has a checksum of its own so that a damaged length
// is never taken for a record cut short. A crash while a record was being
// written can leave it torn at the end of the file: cut short, or ending
// in zeros the file system allocated but never received data for, or
// whole in length with a payload that does not match its checksum. Such a record was never synced, so never acknowledged, and Open
// cuts it off. A damaged record with whole records after it is not a torn
// write but damage to what was acknowledged: Open fails with ErrCorrupt
// and changes nothing. Telling the two apart relies on the one rule a
// caller must keep: Sync after every Append, before the next one, so that
// at most the last record is ever unsynced.
package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"syscall"
)

// ErrCorrupt is returned by Open for a log damaged before its last
// record: acknowledged records may be lost, so nothing is replayed.
var ErrCorrupt = errors.New("wal: log damaged before its last record")

// ErrUnsynced is returned by Append when the previous record has not been
// synced yet (see the package comment).
var ErrUnsynced = errors.New("wal: append before the previous record was synced")

const headerLen = 12

// MaxPayload is the largest record Append takes: its length must fit the
// header's 32 bits.
const MaxPayload = 1<<32 - 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Options configure a Log.
type Options struct {
	// NoSync makes Sync and the directory sync on create no-ops: records
	// can be lost on a crash. For tests and benchmarks only, as the
	// store's own NoFsync.
	NoSync bool
}

// Log is an open log. It is not safe for concurrent use: one goroutine
// (the store's committer) appends, syncs and resets.
type Log struct {
	f        *os.File
	noSync   bool
	size     int64 // bytes of whole records
	unsynced bool  // a record was appended and not synced yet
	buf      []byte
}

// Open opens the log at path, creating it if needed, and calls replay
// with the payload of every whole record in the order they were
// appended. The payload is valid only during the call. A torn last
// record is cut off the file; if replay returns an error, Open returns it
// and closes the log.
func Open(path string, opts Options, replay func(payload []byte) error) (*Log, error) {
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", path, err)
	}
	l := &Log{f: f, noSync: opts.NoSync}
	if created && !opts.NoSync {
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, err
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: read %s: %w", path, err)
	}
	good, err := scan(data, replay)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: %s: %w", path, err)
	}
	if good < int64(len(data)) {
		// Cut the torn record off, durably, so that a later append does
		// not follow garbage.
		if err := l.truncate(good); err != nil {
			f.Close()
			return nil, err
		}
	}
	if _, err := f.Seek(good, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: seek %s: %w", path, err)
	}
	l.size = good
	return l, nil
}

// scan calls replay for every whole record of data and returns the length
// of the whole records, the rest being a torn last record.
func scan(data []byte, replay func([]byte) error) (int64, error) {
	off := 0
	for off < len(data) {
		rest := data[off:]
		if len(rest) < headerLen {
			return int64(off), nil // a header cut short
		}
		if crc32.Checksum(rest[:4], castagnoli) != binary.LittleEndian.Uint32(rest[4:]) {
			if allZero(rest) {
				return int64(off), nil // a header never written
			}
			return 0, fmt.Errorf("%w: bad length at offset %d of %d", ErrCorrupt, off, len(data))
		}
		n := int(binary.LittleEndian.Uint32(rest))
		if n > len(rest)-headerLen {
			return int64(off), nil // a payload cut short
		}
		end := headerLen + n
		if crc32.Checksum(rest[headerLen:end], castagnoli) != binary.LittleEndian.Uint32(rest[8:]) {
			if end == len(rest) {
				return int64(off), nil // the last record, torn
			}
			return 0, fmt.Errorf("%w: checksum mismatch at offset %d of %d", ErrCorrupt, off, len(data))
		}
		if err := replay(rest[headerLen:end]); err != nil {
			return 0, err
		}
		off += end
	}
	return int64(off), nil
}

func allZero(b []byte) bool {
	return len(bytes.Trim(b, "\x00")) == 0
}

// Append writes payload as one record at the end of the log. It is on
// disk only once Sync has returned; until then it must not be
// acknowledged. If Append fails, the log's tail is unknown: the caller
// must stop using it and reopen it, which cuts a partial record off.
func (l *Log) Append(payload []byte) error {
	if l.unsynced {
		return ErrUnsynced
	}
	if int64(len(payload)) > MaxPayload {
		return fmt.Errorf("wal: record of %d bytes, more than %d", len(payload), MaxPayload)
	}
	l.buf = binary.LittleEndian.AppendUint32(l.buf[:0], uint32(len(payload)))
	l.buf = binary.LittleEndian.AppendUint32(l.buf, crc32.Checksum(l.buf[:4], castagnoli))
	l.buf = binary.LittleEndian.AppendUint32(l.buf, crc32.Checksum(payload, castagnoli))
	l.buf = append(l.buf, payload...)
	if _, err := l.f.Write(l.buf); err != nil {
		return fmt.Errorf("wal: append: %w", err)
	}
	l.size += int64(len(l.buf))
	l.unsynced = true
	return nil
}

// Sync makes every appended record durable.
func (l *Log) Sync() error {
	if !l.noSync {
		if err := fdatasync(l.f); err != nil {
			return fmt.Errorf("wal: sync: %w", err)
		}
	}
	l.unsynced = false
	return nil
}

// Size returns the bytes of the log's records.
func (l *Log) Size() int64 { return l.size }

// Reset drops every record, once the caller holds them durably
// elsewhere. The drop itself is synced too; should a crash come first,
// the next Open replays records the caller already has, so replay must
// skip what it holds (by revision, for the store).
func (l *Log) Reset() error {
	if err := l.truncate(0); err != nil {
		return err
	}
	if _, err := l.f.Seek(0, 0); err != nil {
		return fmt.Errorf("wal: seek: %w", err)
	}
	l.size, l.unsynced = 0, false
	return nil
}

func (l *Log) truncate(size int64) error {
	if err := l.f.Truncate(size); err != nil {
		return fmt.Errorf("wal: truncate: %w", err)
	}
	if !l.noSync {
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("wal: sync truncation: %w", err)
		}
	}
	return nil
}

// Close closes the file. Records appended and not synced may or may not
// survive. It is safe to call more than once.
func (l *Log) Close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("wal: open dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("wal: sync dir: %w", err)
	}
	return nil
}
