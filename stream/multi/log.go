package multi

// Resuming a stream of many watchers.
//
// Every message of a stream has a sequence number, its SSE id: a browser
// sends back the id of the last message it received as Last-Event-ID when
// it reconnects. The server cannot know how much of what it wrote arrived
// before a connection dropped (a write returns once the kernel has the
// bytes), so it keeps the deliveryLog: for each message since the fold
// point, whose watcher it was for and what that watcher's next revision
// was after it. Each watcher keeps its state at the fold point (base). A
// cursor c then gives every watcher's position exactly: its base, moved on
// by its messages up to c.
//
// Worked example. Watchers 1 (key a) and 2 (key b), both created at
// revision 10; messages as written:
//
//	seq 1  created  w1          w1.next = 10
//	seq 2  created  w2          w2.next = 10
//	seq 3  events   w1 rev 12   w1.next = 13
//	seq 4  events   w2 rev 12   w2.next = 13
//	seq 5  events   w1 rev 15   w1.next = 16
//
// The connection drops; the client reconnects with Last-Event-ID: 3. Up to
// seq 3 is confirmed and folded into the bases (w1 at 13, w2 created at
// 10); seqs 4 and 5 were lost. Their watchers (both) are rewound: their
// backend watches restart at their base (w1 from 13, w2 from 10), which
// replays revisions 12 (for w2) and 15 (for w1) from history as new
// messages, seq 6 and on. Seqs 4 and 5 are retracted: a cursor between
// the fold point 3 and the log's new first seq 6 is unknown, since its
// messages were taken back.
//
// Bounds: the log keeps the messages of the last ResumeBytes written
// (4 MiB by default: more than a connection's socket buffers hold), each
// in 24 bytes; older ones are folded as if confirmed. A cursor below the
// fold point is too old to resume exactly: the stream then ends, every
// watcher with a canceled message ("cursor too old"), rather than resume
// some watcher with a gap or a duplicate.

// entryKind is what a message did to its watcher.
type entryKind uint8

const (
	entryCreated entryKind = iota + 1 // its created message
	entryData                         // events or progress: next moved on
	entryFinal                        // compacted or canceled: it ended
)

// logEntry is one message of the stream.
type logEntry struct {
	w    *streamWatcher
	next int64 // the watcher's next revision after the message
	size uint32
	kind entryKind
}

// watcherBase is a watcher's state at the log's fold point.
type watcherBase struct {
	next    int64 // the first revision not confirmed
	created bool  // its created message was
	ended   bool  // its final message was
}

// advance moves a watcher's state on by one of its messages.
func (b *watcherBase) advance(kind entryKind, next int64) {
	b.next = next
	switch kind {
	case entryCreated:
		b.created = true
	case entryFinal:
		b.ended = true
	}
}

// deliveryLog records the messages of a stream since its fold point.
type deliveryLog struct {
	entries []logEntry // seqs first .. issued, in order, from head
	head    int
	first   int64 // the seq of entries[head]; issued + 1 when empty
	folded  int64 // every seq up to it is folded into the bases
	written int64 // the last seq handed to a connection
	issued  int64 // the last seq given to a message
	bytes   int64 // the size of the messages of entries
}

// issue records a new message; its seq is issued.
func (l *deliveryLog) issue(w *streamWatcher, kind entryKind, next int64, size int) {
	if l.len() == 0 {
		l.first = l.issued + 1
	}
	l.issued++
	l.entries = append(l.entries, logEntry{w: w, next: next, size: uint32(size), kind: kind})
	l.bytes += int64(size)
}

func (l *deliveryLog) len() int { return len(l.entries) - l.head }

// front returns the oldest entry, or nil.
func (l *deliveryLog) front() *logEntry {
	if l.len() == 0 {
		return nil
	}
	return &l.entries[l.head]
}

// pop forgets the oldest entry and returns its seq.
func (l *deliveryLog) pop() int64 {
	seq := l.first
	l.bytes -= int64(l.entries[l.head].size)
	l.entries[l.head] = logEntry{}
	l.head++
	l.first++
	// Move the live entries down once the dead ones are the most.
	if l.head > len(l.entries)/2 {
		n := copy(l.entries, l.entries[l.head:])
		clear(l.entries[n:])
		l.entries = l.entries[:n]
		l.head = 0
	}
	return seq
}

// reset forgets every entry; the next seq stays issued + 1.
func (l *deliveryLog) reset() {
	clear(l.entries)
	l.entries = l.entries[:0]
	l.head = 0
	l.bytes = 0
	l.first = l.issued + 1
}

// cursorState is how a cursor resolves against the log.
type cursorState int

const (
	cursorOK      cursorState = iota
	cursorTooOld              // below the fold point, or retracted
	cursorUnknown             // never handed to a connection
)

// check resolves cursor c.
func (l *deliveryLog) check(c int64) cursorState {
	switch {
	case c > l.written:
		return cursorUnknown
	case c < l.folded:
		return cursorTooOld
	case c > l.folded && c < l.first:
		return cursorTooOld // retracted
	}
	return cursorOK
}

// fold moves the oldest entry into its watcher's base. A watcher whose
// final message is folded is forgotten.
func (ms *Stream) fold() {
	e := *ms.log.front()
	ms.log.folded = ms.log.pop()
	w := e.w
	w.base.next = e.next
	switch e.kind {
	case entryCreated:
		w.base.created = true
	case entryFinal:
		w.base.ended = true
		if ms.watchers[w.id] == w {
			delete(ms.watchers, w.id)
			ms.ended--
		}
	}
}

// trimLog folds the messages written longest ago while the log holds more
// than ResumeBytes of them.
func (ms *Stream) trimLog() {
	for ms.log.bytes > ms.reg.cfg.ResumeBytes {
		if e := ms.log.front(); e == nil || ms.log.first > ms.log.written {
			return
		}
		ms.fold()
	}
}

// foldEnded folds written messages, oldest first, until fewer than max
// ended watchers are kept.
func (ms *Stream) foldEnded(max int) {
	for ms.ended >= max {
		if e := ms.log.front(); e == nil || ms.log.first > ms.log.written {
			return
		}
		ms.fold()
	}
}

// resume makes the stream go on right after cursor c, which check found
// OK: what the client confirmed is folded; when it missed messages, every
// watcher they were for is rewound to its base and its messages from
// there are queued again, and every message not yet handed to a
// connection with them, so that no watcher's messages go out of order.
func (ms *Stream) resume(c int64) {
	for e := ms.log.front(); e != nil && ms.log.first <= c; e = ms.log.front() {
		ms.fold()
	}
	ms.log.folded = c
	if c == ms.log.written {
		return // nothing was lost; pending goes out as it is
	}
	ms.rewound = ms.rewound[:0]
	for i := ms.log.head; i < len(ms.log.entries); i++ {
		if w := ms.log.entries[i].w; !w.rewound {
			w.rewound = true
			ms.rewound = append(ms.rewound, w)
		}
	}
	ms.log.reset()
	ms.log.written = ms.log.issued
	ms.dropPending()
	for i, w := range ms.rewound {
		ms.rewound[i] = nil
		w.rewound = false
		w.sent = w.base
		if w.base.ended {
			continue
		}
		ms.rewind(w)
	}
	ms.rewound = ms.rewound[:0]
}

// rewind restarts w at its base: its created message again if that was
// not confirmed, then its final message if it ended, or its backend
// watch from its base revision.
func (ms *Stream) rewind(w *streamWatcher) {
	if ms.gone {
		return
	}
	if w.bw != nil {
		w.bw.Close()
		w.bw = nil
	}
	w.next = w.base.next
	w.sent = w.base // what the client has of it: its messages after are sent again
	if !w.base.created {
		ms.emitCreated(w)
	}
	if w.final != nil {
		ms.emitFinal(w)
		return
	}
	if w.parked {
		return // watched again from next once unparked
	}
	if err := ms.watch(w, w.next); err != nil {
		ms.end(cancelReason(err), false)
	}
}
