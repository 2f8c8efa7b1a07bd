package mvcc

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// bigRange fills keys big/000 .. big/<n-1> with values of size bytes and
// returns the store.
func bigRange(tb testing.TB, n, size int) *Store {
	tb.Helper()
	s := openTestStore(tb, Options{})
	for i := range n {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		if _, err := s.Put(kv.PutRequest{Key: fmt.Appendf(nil, "big/%03d", i), Value: v}); err != nil {
			tb.Fatalf("Put(big/%03d) = %v", i, err)
		}
	}
	// No checkpoint left to run while a test counts allocations.
	checkpointNow(tb, s)
	return s
}

// allocated returns the bytes fn allocates on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRangeCopiesOnlyWhatItReturns reads a range of 100 values of 64 KiB
// (6.4 MB) in ways that return one value or none, and checks that the
// range allocates about that, not every value of the range: keys_only and
// count_only copy no value, filters and sorts by index fields copy only
// the keys returned, and a sort by value reads every value in place but
// copies only those it returns.
func TestRangeCopiesOnlyWhatItReturns(t *testing.T) {
	const n, size = 100, 64 << 10
	s := bigRange(t, n, size)
	rev := s.Rev()
	all := []byte("big/")
	end := []byte("big0")
	tests := []struct {
		name  string
		o     kv.RangeOptions
		kvs   int
		bound uint64 // the most the range may allocate
	}{
		{"keys_only", kv.RangeOptions{KeysOnly: true}, n, 64 << 10},
		{"count_only", kv.RangeOptions{CountOnly: true}, 0, 16 << 10},
		{"filter, limit 1", kv.RangeOptions{MinModRevision: 2, Limit: 1}, 1, size + 32<<10},
		{"filter matching one", kv.RangeOptions{MinModRevision: rev}, 1, size + 32<<10},
		{"sort by mod, limit 1", kv.RangeOptions{SortTarget: kv.SortByMod, SortOrder: kv.SortDescend, Limit: 1}, 1, size + 32<<10},
		{"sort by key descending, limit 1", kv.RangeOptions{SortOrder: kv.SortDescend, Limit: 1}, 1, size + 32<<10},
		{"sort by version, limit 1", kv.RangeOptions{SortTarget: kv.SortByVersion, Limit: 1}, 1, size + 32<<10},
		{"sort by value, limit 1", kv.RangeOptions{SortTarget: kv.SortByValue, SortOrder: kv.SortDescend, Limit: 1}, 1, size + 64<<10},
		{"sort by value, keys only", kv.RangeOptions{SortTarget: kv.SortByValue, KeysOnly: true, Limit: 1}, 1, 64 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res kv.RangeResult
			var err error
			got := allocated(func() { res, err = s.Range(all, end, tt.o) })
			if err != nil {
				t.Fatalf("Range(big/, %+v) = %v", tt.o, err)
			}
			if len(res.KVs) != tt.kvs || (!tt.o.CountOnly && res.Count != n) {
				t.Fatalf("Range(big/, %+v) = %d kvs, count %d; want %d kvs, count %d", tt.o, len(res.KVs), res.Count, tt.kvs, n)
			}
			if got > tt.bound {
				t.Errorf("Range(big/, %+v) allocated %d bytes, want at most %d (the range holds %d)", tt.o, got, tt.bound, n*size)
			}
			for _, kval := range res.KVs {
				if tt.o.KeysOnly && kval.Value != nil {
					t.Errorf("Range(big/, %+v): %q has a value", tt.o, kval.Key)
				}
			}
		})
	}
	// The one value a sort by value returns is the largest, and ties keep
	// key order.
	res, err := s.Range(all, end, kv.RangeOptions{SortTarget: kv.SortByValue, SortOrder: kv.SortDescend, Limit: 2})
	if err != nil || len(res.KVs) != 2 || string(res.KVs[0].Key) != "big/025" || string(res.KVs[1].Key) != "big/051" || !res.More {
		t.Errorf("Range(big/, by value descending, limit 2) = %v keys %q more %v, want big/025, big/051, more", err, keys(res.KVs), res.More)
	}
}

func keys(kvs []kv.KeyValue) []string {
	var out []string
	for _, kval := range kvs {
		out = append(out, string(kval.Key))
	}
	return out
}

// TestRangeReadLimits checks that ranges sharing ReadLimits stop before
// copying more than MaxBytes, and that a range without a limit refuses to
// return more than MaxKeys keys.
func TestRangeReadLimits(t *testing.T) {
	const n, size = 50, 64 << 10
	s := bigRange(t, n, size)
	all, end := []byte("big/"), []byte("big0")

	limits := &kv.ReadLimits{MaxBytes: 1 << 20}
	var err error
	got := allocated(func() { _, err = s.Range(all, end, kv.RangeOptions{Limits: limits}) })
	var tl *kv.TooLargeError
	if !errors.As(err, &tl) || tl.MaxBytes != 1<<20 || !errors.Is(err, kv.ErrTooLarge) || !errors.Is(err, kv.ErrInvalidArgument) {
		t.Fatalf("Range(big/, MaxBytes 1 MiB) over %d bytes = %v, want a *TooLargeError naming 1 MiB", n*size, err)
	}
	if got > 2<<20 {
		t.Errorf("Range(big/, MaxBytes 1 MiB) allocated %d bytes before failing, want at most 2 MiB", got)
	}

	// Two ranges share one budget: each fits alone, both do not.
	limits = &kv.ReadLimits{MaxBytes: 20 * (size + 16)}
	if _, err := s.Range(all, end, kv.RangeOptions{Limit: 15, Limits: limits}); err != nil {
		t.Fatalf("first range of 15 keys under a budget of 20 = %v", err)
	}
	if _, err := s.Range(all, end, kv.RangeOptions{Limit: 15, Limits: limits}); !errors.Is(err, kv.ErrTooLarge) {
		t.Fatalf("second range of 15 keys under the same budget of 20 = %v, want ErrTooLarge", err)
	}
	// Keys only count their keys.
	limits = &kv.ReadLimits{MaxBytes: 20 * (size + 16)}
	if res, err := s.Range(all, end, kv.RangeOptions{KeysOnly: true, Limits: limits}); err != nil || len(res.KVs) != n {
		t.Fatalf("keys_only range under a budget of 20 values = %d keys, %v; want %d keys", len(res.KVs), err, n)
	}

	for _, tt := range []struct {
		o    kv.RangeOptions
		fail bool
	}{
		{kv.RangeOptions{KeysOnly: true}, true},
		{kv.RangeOptions{KeysOnly: true, SortTarget: kv.SortByMod}, true},
		{kv.RangeOptions{KeysOnly: true, Limit: 100}, false},
		{kv.RangeOptions{KeysOnly: true, MinModRevision: s.Rev() - 9}, false},
		{kv.RangeOptions{CountOnly: true}, false},
	} {
		tt.o.Limits = &kv.ReadLimits{MaxKeys: 10}
		res, err := s.Range(all, end, tt.o)
		if tt.fail {
			if !errors.As(err, &tl) || tl.MaxKeys != 10 {
				t.Errorf("Range(big/, %+v, MaxKeys 10) over %d keys = %d kvs, %v; want a *TooLargeError naming 10 keys", tt.o, n, len(res.KVs), err)
			}
		} else if err != nil {
			t.Errorf("Range(big/, %+v, MaxKeys 10) = %v, want nil", tt.o, err)
		}
	}
}
