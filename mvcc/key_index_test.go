package mvcc

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// kiWrite is one write of a key: a put, or a delete with tomb set.
type kiWrite struct {
	rev  kv.Revision
	tomb bool
}

func kiPut(main int64) kiWrite  { return kiWrite{rev: kv.Revision{Main: main}} }
func kiTomb(main int64) kiWrite { return kiWrite{rev: kv.Revision{Main: main}, tomb: true} }

// kiAt is a put at a sub revision, for writes sharing a main revision.
func kiAt(main, sub int64) kiWrite { return kiWrite{rev: kv.Revision{Main: main, Sub: sub}} }

// newKeyIndex builds the index of key "a" from writes, in order.
func newKeyIndex(tb testing.TB, writes ...kiWrite) *keyIndex {
	tb.Helper()
	ki := &keyIndex{key: []byte("a")}
	for _, w := range writes {
		if !w.tomb {
			ki.put(w.rev)
			continue
		}
		if err := ki.tombstone(w.rev); err != nil {
			tb.Fatalf("tombstone(%v) = %v, want nil", w.rev, err)
		}
	}
	return ki
}

// exampleKeyIndex is the worked example of keyIndex's doc comment:
// put(a)@2 put(a)@3 delete(a)@4 put(a)@5.
func exampleKeyIndex(tb testing.TB) *keyIndex {
	tb.Helper()
	return newKeyIndex(tb, kiPut(2), kiPut(3), kiTomb(4), kiPut(5))
}

func kiRevs(mains ...int64) []kv.Revision {
	rs := make([]kv.Revision, len(mains))
	for i, m := range mains {
		rs[i] = kv.Revision{Main: m}
	}
	return rs
}

func TestKeyIndexExampleGenerations(t *testing.T) {
	ki := exampleKeyIndex(t)
	want := &keyIndex{
		key:      []byte("a"),
		modified: kv.Revision{Main: 5},
		generations: []generation{
			{ver: 3, created: kv.Revision{Main: 2}, revs: kiRevs(2, 3, 4)},
			{ver: 1, created: kv.Revision{Main: 5}, revs: kiRevs(5)},
		},
	}
	if !reflect.DeepEqual(ki, want) {
		t.Errorf("put 2, put 3, tombstone 4, put 5 = %+v, want %+v", ki, want)
	}
}

// kiGet is what keyIndex.get returns.
type kiGet struct {
	modified, created int64
	ver               int64
	err               error
}

func (g kiGet) String() string {
	if g.err != nil {
		return g.err.Error()
	}
	return fmt.Sprintf("mod %d created %d version %d", g.modified, g.created, g.ver)
}

func kiGetAt(ki *keyIndex, rev int64) kiGet {
	mod, created, ver, err := ki.get(rev)
	return kiGet{modified: mod.Main, created: created.Main, ver: ver, err: err}
}

// kiNotFound is get's answer when the key did not exist.
func kiNotFound() kiGet { return kiGet{err: errRevisionNotFound} }

func TestKeyIndexGet(t *testing.T) {
	tests := []struct {
		name   string
		writes []kiWrite
		at     int64
		want   kiGet
	}{
		{"example before the first put", []kiWrite{kiPut(2), kiPut(3), kiTomb(4), kiPut(5)}, 1, kiNotFound()},
		{"example at the first put", []kiWrite{kiPut(2), kiPut(3), kiTomb(4), kiPut(5)}, 2, kiGet{2, 2, 1, nil}},
		{"example at the second put", []kiWrite{kiPut(2), kiPut(3), kiTomb(4), kiPut(5)}, 3, kiGet{3, 2, 2, nil}},
		{"example at the tombstone", []kiWrite{kiPut(2), kiPut(3), kiTomb(4), kiPut(5)}, 4, kiNotFound()},
		{"example at the second generation", []kiWrite{kiPut(2), kiPut(3), kiTomb(4), kiPut(5)}, 5, kiGet{5, 5, 1, nil}},
		{"example after everything", []kiWrite{kiPut(2), kiPut(3), kiTomb(4), kiPut(5)}, 9, kiGet{5, 5, 1, nil}},
		{"gap between generations", []kiWrite{kiPut(2), kiTomb(4), kiPut(7)}, 5, kiNotFound()},
		{"deleted for good", []kiWrite{kiPut(2), kiTomb(4)}, 9, kiNotFound()},
		{"newest sub revision wins", []kiWrite{kiAt(3, 0), kiAt(3, 1), kiAt(3, 2)}, 3, kiGet{3, 3, 3, nil}},
		{"no writes", nil, 5, kiNotFound()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ki := newKeyIndex(t, tt.writes...)
			if got := kiGetAt(ki, tt.at); got.String() != tt.want.String() {
				t.Errorf("get(%d) after %v = %v, want %v", tt.at, tt.writes, got, tt.want)
			}
		})
	}
}

func TestKeyIndexTombstone(t *testing.T) {
	tests := []struct {
		name    string
		writes  []kiWrite
		wantErr error
	}{
		{"live key", []kiWrite{kiPut(2)}, nil},
		{"recreated key", []kiWrite{kiPut(2), kiTomb(3), kiPut(4)}, nil},
		{"never written", nil, errRevisionNotFound},
		{"already deleted", []kiWrite{kiPut(2), kiTomb(3)}, errRevisionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ki := newKeyIndex(t, tt.writes...)
			before := fmt.Sprintf("%+v", ki)
			err := ki.tombstone(kv.Revision{Main: 9})
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("tombstone(9) after %v = %v, want %v", tt.writes, err, tt.wantErr)
			}
			if err != nil {
				if after := fmt.Sprintf("%+v", ki); after != before {
					t.Errorf("failed tombstone(9) changed the index from %s to %s", before, after)
				}
				return
			}
			if got := kiGetAt(ki, 9); got.String() != kiNotFound().String() {
				t.Errorf("get(9) after tombstone(9) = %v, want %v", got, kiNotFound())
			}
			if got := ki.generations[len(ki.generations)-1]; !got.isEmpty() {
				t.Errorf("tombstone(9) left current generation %+v, want an empty one", got)
			}
		})
	}
}

func TestKeyIndexCompact(t *testing.T) {
	example := []kiWrite{kiPut(2), kiPut(3), kiTomb(4), kiPut(5)}
	tests := []struct {
		name     string
		writes   []kiWrite
		at       int64
		wantGens []generation
		wantKeep []kv.Revision
	}{
		{
			name: "example below every revision", writes: example, at: 1,
			wantGens: []generation{{3, kv.Revision{Main: 2}, kiRevs(2, 3, 4)}, {1, kv.Revision{Main: 5}, kiRevs(5)}},
		},
		{
			name: "example at the first put", writes: example, at: 2,
			wantGens: []generation{{3, kv.Revision{Main: 2}, kiRevs(2, 3, 4)}, {1, kv.Revision{Main: 5}, kiRevs(5)}},
			wantKeep: kiRevs(2),
		},
		{
			name: "example at the second put", writes: example, at: 3,
			wantGens: []generation{{3, kv.Revision{Main: 2}, kiRevs(3, 4)}, {1, kv.Revision{Main: 5}, kiRevs(5)}},
			wantKeep: kiRevs(3),
		},
		{
			name: "example keeps a tombstone at the compact revision", writes: example, at: 4,
			wantGens: []generation{{3, kv.Revision{Main: 2}, kiRevs(4)}, {1, kv.Revision{Main: 5}, kiRevs(5)}},
			wantKeep: kiRevs(4),
		},
		{
			name: "example drops a generation that ended before", writes: example, at: 5,
			wantGens: []generation{{1, kv.Revision{Main: 5}, kiRevs(5)}},
			wantKeep: kiRevs(5),
		},
		{
			name: "example above every revision", writes: example, at: 9,
			wantGens: []generation{{1, kv.Revision{Main: 5}, kiRevs(5)}},
			wantKeep: kiRevs(5),
		},
		{
			name: "deleted key keeps its tombstone at the compact revision", writes: []kiWrite{kiPut(2), kiTomb(3)}, at: 3,
			wantGens: []generation{{2, kv.Revision{Main: 2}, kiRevs(3)}, {}},
			wantKeep: kiRevs(3),
		},
		{
			name: "deleted key has nothing left after its tombstone", writes: []kiWrite{kiPut(2), kiTomb(3)}, at: 4,
			wantGens: []generation{{}},
		},
		{
			name: "newest sub revision at the compact revision", writes: []kiWrite{kiAt(3, 0), kiAt(3, 1)}, at: 3,
			wantGens: []generation{{2, kv.Revision{Main: 3}, []kv.Revision{{Main: 3, Sub: 1}}}},
			wantKeep: []kv.Revision{{Main: 3, Sub: 1}},
		},
		{
			// One write deleted the key and put it again at revision 6:
			// the put, not the tombstone before it, is what reads at 6
			// see, so it must survive.
			name:     "key deleted and put again at the compact revision",
			writes:   []kiWrite{kiPut(2), {rev: kv.Revision{Main: 6, Sub: 0}, tomb: true}, kiAt(6, 1)},
			at:       6,
			wantGens: []generation{{1, kv.Revision{Main: 6, Sub: 1}, []kv.Revision{{Main: 6, Sub: 1}}}},
			wantKeep: []kv.Revision{{Main: 6, Sub: 1}},
		},
		{
			name: "key deleted, put and deleted again at the compact revision",
			writes: []kiWrite{
				kiPut(2), {rev: kv.Revision{Main: 6, Sub: 0}, tomb: true},
				kiAt(6, 1), {rev: kv.Revision{Main: 6, Sub: 2}, tomb: true},
			},
			at:       6,
			wantGens: []generation{{2, kv.Revision{Main: 6, Sub: 1}, []kv.Revision{{Main: 6, Sub: 2}}}, {}},
			wantKeep: []kv.Revision{{Main: 6, Sub: 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ki := newKeyIndex(t, tt.writes...)
			keep := make(map[kv.Revision]struct{})
			ki.compact(tt.at, keep)
			if !reflect.DeepEqual(ki.generations, tt.wantGens) {
				t.Errorf("compact(%d) after %v left generations %+v, want %+v", tt.at, tt.writes, ki.generations, tt.wantGens)
			}
			gotKeep := slices.SortedFunc(maps.Keys(keep), compareRevisions)
			if !slices.Equal(gotKeep, tt.wantKeep) {
				t.Errorf("compact(%d) after %v kept %v, want %v", tt.at, tt.writes, gotKeep, tt.wantKeep)
			}
		})
	}
}

// TestKeyIndexCompactKeepsReads checks that compaction at c changes no
// read at c or later, for every c of the example and of a key deleted and
// put again within one revision.
func TestKeyIndexCompactKeepsReads(t *testing.T) {
	for _, writes := range [][]kiWrite{
		{kiPut(2), kiPut(3), kiTomb(4), kiPut(5)},
		{kiPut(2), {rev: kv.Revision{Main: 4}, tomb: true}, kiAt(4, 1), kiPut(6), kiTomb(7)},
	} {
		for c := int64(1); c <= 8; c++ {
			ki := newKeyIndex(t, writes...)
			want := make([]string, 0, 9)
			for rev := c; rev <= 9; rev++ {
				want = append(want, kiGetAt(ki, rev).String())
			}
			ki.compact(c, make(map[kv.Revision]struct{}))
			for i, rev := 0, c; rev <= 9; i, rev = i+1, rev+1 {
				if got := kiGetAt(ki, rev).String(); got != want[i] {
					t.Errorf("after %v and compact(%d): get(%d) = %s, want %s", writes, c, rev, got, want[i])
				}
			}
		}
	}
}

func TestKeyIndexUnput(t *testing.T) {
	tests := []struct {
		name   string
		writes []kiWrite
		undo   kiWrite
	}{
		{"only put", nil, kiPut(2)},
		{"second put", []kiWrite{kiPut(2)}, kiPut(3)},
		{"tombstone", []kiWrite{kiPut(2), kiPut(3)}, kiTomb(4)},
		{"put recreating the key", []kiWrite{kiPut(2), kiPut(3), kiTomb(4)}, kiPut(5)},
		{"sub revision", []kiWrite{kiAt(5, 0)}, kiAt(5, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ki := newKeyIndex(t, tt.writes...)
			want := fmt.Sprintf("%+v", ki)
			wantGets := make([]string, 0, 6)
			for rev := int64(1); rev <= 6; rev++ {
				wantGets = append(wantGets, kiGetAt(ki, rev).String())
			}
			ki = newKeyIndex(t, append(slices.Clone(tt.writes), tt.undo)...)
			ki.unput(tt.undo.rev, tt.undo.tomb)
			if len(tt.writes) == 0 {
				// The index had nothing before: it must be empty again.
				if !ki.isEmpty() {
					t.Errorf("unput(%v) of the only write left %+v, want an empty index", tt.undo.rev, ki)
				}
				return
			}
			if got := fmt.Sprintf("%+v", ki); got != want {
				t.Errorf("unput(%v) after %v = %s, want %s", tt.undo.rev, tt.writes, got, want)
			}
			for rev := int64(1); rev <= 6; rev++ {
				if got := kiGetAt(ki, rev).String(); got != wantGets[rev-1] {
					t.Errorf("get(%d) after unput(%v) = %s, want %s", rev, tt.undo.rev, got, wantGets[rev-1])
				}
			}
		})
	}
}

func TestKeyIndexUnputNotNewestPanics(t *testing.T) {
	ki := newKeyIndex(t, kiPut(2), kiPut(3))
	defer func() {
		if recover() == nil {
			t.Errorf("unput(2) with 3 newer did not panic")
		}
	}()
	ki.unput(kv.Revision{Main: 2}, false)
}
