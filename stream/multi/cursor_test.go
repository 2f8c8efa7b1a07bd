package multi

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestSharedCursorRoundTrip: the positions a message's id carries are
// read back as written, gaps and watchers past the last one included;
// watchers at one revision make one run.
func TestSharedCursorRoundTrip(t *testing.T) {
	ms := &Stream{shared: &sharedStream{known: 7}}
	ms.shared.inst = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	sent := map[int64]watcherBase{
		1: {next: 10, created: true},
		2: {next: 10, created: true},
		3: {next: 4},
		5: {next: 99, created: true, ended: true},
		6: {next: 12, created: true},
	}
	for _, id := range []int64{1, 2, 3, 5, 6} {
		ms.shared.order = append(ms.shared.order, &streamWatcher{id: id, sent: sent[id]})
	}
	id := "42" + string(ms.cursorSuffix())
	c, err := ParseCursor(id)
	if err != nil {
		t.Fatalf("parse %q: %v", id, err)
	}
	if c.seq != 42 || c.inst != ms.shared.inst || !c.hasPos || c.known != 7 {
		t.Fatalf("cursor %+v", c)
	}
	want := map[int64]uint64{1: 12, 2: 12, 3: posUncreated, 4: posGone, 5: posGone, 6: 14, 7: posGone, 8: posUncreated}
	for wid, st := range want {
		if got := c.state(wid); got != st {
			t.Errorf("watcher %d: state %d, want %d", wid, got, st)
		}
	}
	if len(c.runs) != 5 {
		t.Errorf("%d runs, want 5 (1-2, 3, 4-5, 6, 7): %+v", len(c.runs), c.runs)
	}
}

// TestSharedCursorBounds: a stream whose positions do not fit its id
// carries its instance alone; a common stream of many watchers at one
// revision fits in a few bytes.
func TestSharedCursorBounds(t *testing.T) {
	ms := &Stream{shared: &sharedStream{known: 10000}}
	for id := int64(1); id <= 10000; id++ {
		ms.shared.order = append(ms.shared.order, &streamWatcher{id: id, sent: watcherBase{next: 500, created: true}})
	}
	same := string(ms.cursorSuffix())
	if len(same) > 32 {
		t.Fatalf("10000 watchers at one revision: a cursor of %d bytes", len(same))
	}
	for i, w := range ms.shared.order {
		w.sent.next = int64(1000 + i) // every one apart
	}
	apart := "7" + string(ms.cursorSuffix())
	if len(apart) > MaxCursorText {
		t.Fatalf("a cursor of %d bytes, past what a client may send (%d)", len(apart), MaxCursorText)
	}
	c, err := ParseCursor(apart)
	if err != nil || c.hasPos || !c.hasInst {
		t.Fatalf("positions past the bound: %+v, %v; want the instance alone", c, err)
	}
}

// TestSharedCursorRefused: what is not a cursor is refused with 400.
func TestSharedCursorRefused(t *testing.T) {
	enc := func(known uint64, runs ...uint64) string {
		raw := make([]byte, 8)
		raw = binary.AppendUvarint(raw, known)
		for _, r := range runs {
			raw = binary.AppendUvarint(raw, r)
		}
		return "3." + base64.RawURLEncoding.EncodeToString(raw)
	}
	for _, s := range []string{
		"x", "-1", "1.", "1.@@", "1.AAAA", // not numbers, not base64, too short
		enc(3, 2, 5),       // runs short of known
		enc(2, 2, 5, 1, 5), // runs past known
		enc(2, 0, 5),       // an empty run
		"1." + strings.Repeat("A", MaxCursorText), // too long
	} {
		var ce *CursorError
		if _, err := ParseCursor(s); !errors.As(err, &ce) || ce.Text != s {
			t.Errorf("parse %.40q: %v, want a CursorError", s, err)
		}
	}
	if c, err := ParseCursor(strconv.Itoa(12)); err != nil || c.seq != 12 || c.hasInst {
		t.Errorf("a sequence number alone: %+v, %v", c, err)
	}
}

// BenchmarkSharedCursor: the cursor of one message of a stream of 10,000
// watchers of which 10 are busy, as each message computes it.
func BenchmarkSharedCursor(b *testing.B) {
	ms := &Stream{shared: &sharedStream{known: 10000}, watchers: make(map[int64]*streamWatcher)}
	for id := int64(1); id <= 10000; id++ {
		w := &streamWatcher{id: id, sent: watcherBase{next: 500, created: true}}
		if id%1000 == 0 {
			w.sent.next = 600 + id
		}
		ms.watchers[id] = w
		ms.shared.order = append(ms.shared.order, w)
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(ms.cursorSuffix())
	}
	b.ReportMetric(float64(n), "id-bytes")
}
