package mvcc

import (
	"errors"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// compactAndWait compacts s at rev and waits for the history to be gone.
func compactAndWait(tb testing.TB, s *Store, rev int64) {
	tb.Helper()
	done, err := s.Compact(rev)
	if err != nil {
		tb.Fatalf("Compact(%d) = %v, want nil", rev, err)
	}
	if err := <-done; err != nil {
		tb.Fatalf("Compact(%d) finished with %v, want nil", rev, err)
	}
}

// TestHistoryPageCompaction: the compact revision's own events, the
// tombstone included, stay readable; anything below it fails, at the
// start and for a page token the compaction overtook, before and after a
// restart.
func TestHistoryPageCompaction(t *testing.T) {
	s := openTestStore(t, Options{})
	l := newHistoryLog()
	l.put(t, s, "a", "1") // 2
	l.put(t, s, "a", "2") // 3
	l.del(t, s, "a", "")  // 4
	l.put(t, s, "b", "1") // 5
	l.put(t, s, "b", "2") // 6

	// Pages read before the compaction, to follow after it.
	every := kv.HistoryRequest{Key: []byte{0}, End: []byte{0}}
	asc := every
	asc.Limit = 1
	ascPage, err := s.HistoryPage(asc)
	if err != nil || !ascPage.More || ascPage.Next != (kv.Revision{Main: 3}) {
		t.Fatalf("HistoryPage(%s) = %+v, %v, want more from 3", showHistoryRequest(asc), ascPage, err)
	}
	desc := every
	desc.Descend, desc.Limit = true, 2
	descPage, err := s.HistoryPage(desc)
	if err != nil || !descPage.More || descPage.Next != (kv.Revision{Main: 4}) {
		t.Fatalf("HistoryPage(%s) = %+v, %v, want more from 4", showHistoryRequest(desc), descPage, err)
	}

	compactAndWait(t, s, 4)
	check := func(t *testing.T, s *Store) {
		tests := []struct {
			name string
			q    kv.HistoryRequest
			want []string
			err  bool
		}{
			{"start below", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, StartRevision: 3}, nil, true},
			{"single key start below", kv.HistoryRequest{Key: []byte("a"), StartRevision: 1}, nil, true},
			{"start at", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, StartRevision: 4},
				[]string{"delete a@4", "put b=1@5", "put b=2@6"}, false},
			{"default start", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}},
				[]string{"delete a@4", "put b=1@5", "put b=2@6"}, false},
			{"single key tombstone at", kv.HistoryRequest{Key: []byte("a")}, []string{"delete a@4"}, false},
			{"descending to the compact revision", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, Descend: true},
				[]string{"put b=2@6", "put b=1@5", "delete a@4"}, false},
			{"prev_kv below is gone", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, PrevKV: true},
				[]string{"delete a@4", "put b=1@5", "put b=2@6 (was b=1@5)"}, false},
			{"ascending token overtaken", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, StartRevision: 1, EndRevision: 6, Resume: ascPage.Next, Limit: 1}, nil, true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				page, err := s.HistoryPage(tt.q)
				var ce *kv.CompactedError
				if tt.err {
					if !errors.As(err, &ce) || ce.CompactRevision != 4 {
						t.Errorf("HistoryPage(%s) = %+v, %v; want compacted at 4", showHistoryRequest(tt.q), page, err)
					}
					return
				}
				got := showHistory(page.Events, showEvent)
				if err != nil || !slices.Equal(got, tt.want) || page.More || page.CompactRevision != 4 {
					t.Errorf("HistoryPage(%s) = %q more=%v compact=%d, %v; want %q, compact 4",
						showHistoryRequest(tt.q), got, page.More, page.CompactRevision, err, tt.want)
				}
			})
		}
		// A descending token the compaction overtook reads down to the
		// compact revision, then fails.
		q := desc
		q.StartRevision, q.EndRevision, q.Resume = descPage.StartRevision, descPage.EndRevision, descPage.Next
		page, err := s.HistoryPage(q)
		if got := showHistory(page.Events, showEvent); err != nil || !slices.Equal(got, []string{"delete a@4"}) || !page.More {
			t.Fatalf("HistoryPage(%s) = %q more=%v, %v; want [delete a@4] and more", showHistoryRequest(q), got, page.More, err)
		}
		q.Resume = page.Next
		var ce *kv.CompactedError
		if page, err := s.HistoryPage(q); !errors.As(err, &ce) {
			t.Errorf("HistoryPage(%s) below the compaction = %+v, %v; want compacted", showHistoryRequest(q), page, err)
		}
	}
	t.Run("running", func(t *testing.T) { check(t, s) })
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	reopened, err := Open(s.Path(), nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer reopened.Close()
	t.Run("reopened", func(t *testing.T) { check(t, reopened) })
}
