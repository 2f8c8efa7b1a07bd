package mvcc

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestHistoryPageSparseKey: a key written twice around a thousand other
// writes. A range over it reads at most MaxScan records a page, so the
// pages between its events are empty with more; the key alone is read
// from the index, in one page whatever lies between.
func TestHistoryPageSparseKey(t *testing.T) {
	s := openTestStore(t, Options{})
	l := newHistoryLog()
	first := l.put(t, s, "s", "first")
	for i := range 1000 {
		l.put(t, s, fmt.Sprintf("busy/%d", i%10), "x")
	}
	last := l.put(t, s, "s", "last")

	single := kv.HistoryRequest{Key: []byte("s"), MaxScan: 100}
	page, err := s.HistoryPage(single)
	want := []string{fmt.Sprintf("put s=first@%d", first), fmt.Sprintf("put s=last@%d", last)}
	if got := showHistory(page.Events, showEvent); err != nil || !slices.Equal(got, want) || page.More {
		t.Errorf("HistoryPage(%s) = %q more=%v, %v; want %q in one page", showHistoryRequest(single), got, page.More, err, want)
	}

	prefix := kv.HistoryRequest{Key: []byte("s"), End: []byte("t"), MaxScan: 100}
	var got []string
	pages, empty := 0, 0
	for {
		page, err := s.HistoryPage(prefix)
		if err != nil {
			t.Fatalf("HistoryPage(%s) = %v", showHistoryRequest(prefix), err)
		}
		pages++
		if len(page.Events) == 0 {
			empty++
		}
		got = append(got, showHistory(page.Events, showEvent)...)
		if !page.More {
			break
		}
		prefix.StartRevision, prefix.EndRevision, prefix.Resume = page.StartRevision, page.EndRevision, page.Next
	}
	if !slices.Equal(got, want) || pages != 11 || empty != 9 {
		t.Errorf("HistoryPage(prefix s, scan 100) over %d pages (%d empty) = %q; want %q over 11 pages, 9 empty", pages, empty, got, want)
	}
}

// TestHistoryPageBytesBound: a page stops before the event that would
// take it past MaxBytes, but always holds one.
func TestHistoryPageBytesBound(t *testing.T) {
	s := openTestStore(t, Options{})
	big := strings.Repeat("v", 1000)
	for range 5 {
		s.Put(kv.PutRequest{Key: []byte("k"), Value: []byte(big)})
	}
	tests := []struct {
		maxBytes, want int
	}{
		{1, 1},
		{2 * (1000 + 1 + historyEventOverhead), 2},
		{3*(1000+1+historyEventOverhead) - 1, 2},
		{0, 5},
	}
	for _, tt := range tests {
		q := kv.HistoryRequest{Key: []byte("k"), MaxBytes: tt.maxBytes}
		page, err := s.HistoryPage(q)
		if err != nil || len(page.Events) != tt.want || page.More != (tt.want < 5) {
			t.Errorf("HistoryPage(%s) = %d events more=%v, %v; want %d", showHistoryRequest(q), len(page.Events), page.More, err, tt.want)
		}
	}
}

// TestKeyIndexWalk walks a key's revisions both ways from every kind of
// position.
func TestKeyIndexWalk(t *testing.T) {
	live := &keyIndex{key: []byte("a")}
	live.put(kv.Revision{Main: 2})
	live.put(kv.Revision{Main: 3, Sub: 1})
	if err := live.tombstone(kv.Revision{Main: 4}); err != nil {
		t.Fatal(err)
	}
	live.put(kv.Revision{Main: 6})
	live.put(kv.Revision{Main: 7})
	deleted := &keyIndex{key: []byte("d")}
	deleted.put(kv.Revision{Main: 2})
	if err := deleted.tombstone(kv.Revision{Main: 5}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		ki      *keyIndex
		pos     kv.Revision
		descend bool
		want    string
	}{
		{"all up", live, kv.Revision{}, false, "2.0 3.1 4.0t 6.0 7.0"},
		{"up from a tombstone", live, kv.Revision{Main: 4}, false, "4.0t 6.0 7.0"},
		{"up from inside a revision", live, kv.Revision{Main: 3, Sub: 1}, false, "3.1 4.0t 6.0 7.0"},
		{"up from past it", live, kv.Revision{Main: 3, Sub: 2}, false, "4.0t 6.0 7.0"},
		{"up from a gap", live, kv.Revision{Main: 5}, false, "6.0 7.0"},
		{"up from the end", live, kv.Revision{Main: 8}, false, ""},
		{"all down", live, kv.Revision{Main: 9, Sub: maxSub}, true, "7.0 6.0 4.0t 3.1 2.0"},
		{"down from a gap", live, kv.Revision{Main: 5, Sub: maxSub}, true, "4.0t 3.1 2.0"},
		{"down from before a sub", live, kv.Revision{Main: 3}, true, "2.0"},
		{"down from the start", live, kv.Revision{Main: 1, Sub: maxSub}, true, ""},
		{"deleted key up", deleted, kv.Revision{}, false, "2.0 5.0t"},
		{"deleted key down", deleted, kv.Revision{Main: 9}, true, "5.0t 2.0"},
		{"deleted key down from the tombstone", deleted, kv.Revision{Main: 5}, true, "5.0t 2.0"},
	}
	for _, tt := range tests {
		var got []string
		tt.ki.walk(tt.pos, tt.descend, func(rev kv.Revision, tomb bool) bool {
			s := fmt.Sprintf("%d.%d", rev.Main, rev.Sub)
			if tomb {
				s += "t"
			}
			got = append(got, s)
			return true
		})
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s: walk(%v, descend=%v) = %q, want %q", tt.name, tt.pos, tt.descend, strings.Join(got, " "), tt.want)
		}
	}
	n := 0
	live.walk(kv.Revision{}, false, func(kv.Revision, bool) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("walk went on after fn returned false: %d calls, want 2", n)
	}
}
