package multi

import (
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"strings"
)

// The cursor of a stream shared by the gateways of a deployment.
//
// A stream's log (log.go) is the serving gateway's: a client
// resuming on another gateway, or after its gateway died, cannot be
// resumed from it. So each message's id carries, after its sequence
// number, where every watcher of the stream stands right after it:
//
//	id: <seq>.<base64url of: instance (8 bytes), known (uvarint), runs>
//
// instance names the stream's instance on the gateway that wrote it (its
// log); known is the highest watch ID it knew; runs are (count, state)
// uvarint pairs over watch IDs 1..known in order, state 0 for a watcher
// whose final message was sent (or that this instance never had), 1 for
// one whose created message was not, and next+2 for one whose events
// were sent up to next (exclusive). Watchers created together start at
// the same revision and watchers of quiet keys stay there, so a stream of
// thousands of watchers of which a few are busy has a cursor of a few
// runs. A cursor whose runs would pass maxCursorRuns bytes carries none:
// such an id resumes on the gateway that wrote it only.
//
// A gateway given a cursor of its own instance resumes from its log, as a
// single gateway does. Given another's, it makes a new instance of the
// stream from its record in etcd, every watcher starting where the cursor
// says: its created message unless sent, then its events from next, or
// its final message if it was deleted since. The cursor is not sealed:
// all it chooses is the revisions the owner's own watchers start from,
// which the owner may choose anyway (start_revision), on ranges the
// record holds and the owner's permissions are checked against.

// Bounds of a cursor.
const (
	maxCursorRuns = 2048         // bytes of runs a message's id carries at most
	MaxCursorText = 4*1024 + 256 // what a client may send as Last-Event-ID
)

// Watcher states in a cursor.
const (
	posGone      = 0
	posUncreated = 1
	posNextBase  = 2
)

// Cursor is a cursor as a client sent it.
type Cursor struct {
	seq     int64
	inst    [8]byte
	hasInst bool
	hasPos  bool
	known   int64
	runs    []cursorRun
}

// cursorRun: the watchers up to and including ID end have state value.
type cursorRun struct {
	end   int64
	value uint64
}

// state returns watcher id's state: posGone, posUncreated, or its next
// revision plus posNextBase. Watchers above known are posUncreated.
func (c *Cursor) state(id int64) uint64 {
	if !c.hasPos || id > c.known {
		return posUncreated
	}
	lo, hi := 0, len(c.runs)
	for lo < hi {
		m := (lo + hi) / 2
		if c.runs[m].end < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return c.runs[lo].value
}

// ParseCursor reads a Last-Event-ID: a sequence number, alone or
// with the positions of a stream shared by gateways.
func ParseCursor(s string) (*Cursor, error) {
	bad := func() error { return &CursorError{Problem: CursorMalformed, Text: s} }
	if len(s) > MaxCursorText {
		return nil, &CursorError{Problem: CursorTooLong, Text: s}
	}
	num, rest, hasRest := strings.Cut(s, ".")
	c := &Cursor{}
	var err error
	if c.seq, err = strconv.ParseInt(num, 10, 64); err != nil || c.seq < 0 {
		return nil, bad()
	}
	if !hasRest {
		return c, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < len(c.inst) {
		return nil, bad()
	}
	c.hasInst = true
	copy(c.inst[:], raw)
	raw = raw[len(c.inst):]
	if len(raw) == 0 {
		return c, nil
	}
	known, n := binary.Uvarint(raw)
	if n <= 0 || known > 1<<40 {
		return nil, bad()
	}
	raw = raw[n:]
	c.hasPos, c.known = true, int64(known)
	var at uint64
	for len(raw) > 0 {
		count, n := binary.Uvarint(raw)
		if n <= 0 || count == 0 || count > known-at {
			return nil, bad()
		}
		raw = raw[n:]
		value, n := binary.Uvarint(raw)
		if n <= 0 || value > 1<<62 {
			return nil, bad()
		}
		raw = raw[n:]
		at += count
		c.runs = append(c.runs, cursorRun{end: int64(at), value: value})
	}
	if at != known {
		return nil, bad()
	}
	return c, nil
}

// cursorSuffix returns what follows the sequence number in the id of the
// message just recorded: the instance and, if they fit, where the
// watchers stand. The caller holds mu.
func (ms *Stream) cursorSuffix() []byte {
	sh := ms.shared
	b := append(sh.suffix[:0], '.')
	raw := append(sh.raw[:0], sh.inst[:]...)
	head := len(raw)
	raw = binary.AppendUvarint(raw, uint64(sh.known))
	var (
		at    int64 // the IDs up to at are in the runs
		count uint64
		value uint64
	)
	flush := func() {
		if count > 0 {
			raw = binary.AppendUvarint(raw, count)
			raw = binary.AppendUvarint(raw, value)
		}
	}
	add := func(n, v uint64) {
		if count > 0 && v == value {
			count += n
			return
		}
		flush()
		count, value = n, v
	}
	// Watchers whose final message is folded are gone from the stream:
	// they leave the order too (a gap reads as gone) once they are half
	// of it, so that it holds at most twice what the stream holds,
	// however many watchers came and went.
	if len(sh.order) > 2*len(ms.watchers)+16 {
		kept := sh.order[:0]
		for _, w := range sh.order {
			if w.sent.ended && ms.watchers[w.id] != w {
				continue
			}
			kept = append(kept, w)
		}
		clear(sh.order[len(kept):])
		sh.order = kept
	}
	for _, w := range sh.order {
		if w.id > at+1 {
			add(uint64(w.id-at-1), posGone)
		}
		add(1, w.sentState())
		at = w.id
		if len(raw) > maxCursorRuns {
			raw = raw[:head] // too many runs: the instance alone
			count = 0
			break
		}
	}
	if len(raw) > head {
		if at < sh.known {
			add(uint64(sh.known-at), posGone)
		}
		flush()
		if len(raw) > maxCursorRuns {
			raw = raw[:head]
		}
	}
	sh.raw = raw
	b = base64.RawURLEncoding.AppendEncode(b, raw)
	sh.suffix = b
	return b
}

// cursorBytes bounds what a message's id adds to it for its cursor
// (planTake counts it).
func (ms *Stream) cursorBytes() int64 {
	if ms.shared == nil {
		return 0
	}
	return int64(1 + base64.RawURLEncoding.EncodedLen(maxCursorRuns+8+binary.MaxVarintLen64*2))
}

// sentState is w's state in a cursor after what was sent of it.
func (w *streamWatcher) sentState() uint64 {
	switch {
	case w.sent.ended:
		return posGone
	case !w.sent.created:
		return posUncreated
	}
	return uint64(w.sent.next) + posNextBase
}
