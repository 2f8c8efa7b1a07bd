package lease

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestSpread(t *testing.T) {
	s := time.Second
	cases := []struct {
		name   string
		perSec int
		ttls   []int64
		want   []time.Duration // expiries after now, in TTL order
	}{
		{name: "apart enough", perSec: 2, ttls: []int64{30, 5, 9}, want: []time.Duration{5 * s, 9 * s, 30 * s}},
		{name: "crowd spaced", perSec: 2, ttls: []int64{5, 9, 5, 5}, want: []time.Duration{5 * s, 5500 * time.Millisecond, 6 * s, 9 * s}},
		{name: "crowd pushes later ttls", perSec: 1, ttls: []int64{6, 5, 5, 5}, want: []time.Duration{5 * s, 6 * s, 7 * s, 8 * s}},
		{name: "below minimum raised", perSec: 10, ttls: []int64{1}, want: []time.Duration{time.Duration(MinTTL) * s}},
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs := make([]record, len(tc.ttls))
			for i, ttl := range tc.ttls {
				recs[i] = record{id: int64(i + 1), ttl: ttl}
			}
			var got []time.Duration
			for _, e := range spread(recs, now, tc.perSec) {
				if !e.check.Equal(e.expiry) {
					t.Fatalf("spread: lease %d checked at %v, expires at %v", e.id, e.check, e.expiry)
				}
				got = append(got, e.expiry.Sub(now))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("spread(ttls %v, %d/s) = %v, want %v", tc.ttls, tc.perSec, got, tc.want)
			}
		})
	}
}

// TestSpreadBoundsExpiriesPerSecond checks the property Restore promises:
// no lease expires before its full TTL, and no second holds more than
// perSec expiries.
func TestSpreadBoundsExpiriesPerSecond(t *testing.T) {
	const perSec = 750
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]record, 20_000)
	for i := range recs {
		recs[i] = record{id: int64(i + 1), ttl: MinTTL + rand.Int64N(20)}
	}
	entries := spread(recs, now, perSec)
	byID := make(map[int64]int64, len(recs))
	for _, r := range recs {
		byID[r.id] = r.ttl
	}
	expiries := make([]time.Time, len(entries))
	for i, e := range entries {
		if full := now.Add(time.Duration(byID[e.id]) * time.Second); e.expiry.Before(full) {
			t.Fatalf("lease %d with TTL %d expires %v after restore, before its full TTL", e.id, byID[e.id], e.expiry.Sub(now))
		}
		expiries[i] = e.expiry
	}
	slices.SortFunc(expiries, time.Time.Compare)
	for i := perSec; i < len(expiries); i++ {
		if d := expiries[i].Sub(expiries[i-perSec]); d < time.Second {
			t.Fatalf("%d leases expire within %v, want at most %d in any second", perSec+1, d, perSec)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []record{{id: 1, ttl: 1}, {id: MaxID, ttl: MaxTTL}, {id: 1 << 40, ttl: 60}} {
		f.Add(r.key(), r.value())
	}
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1}, []byte{1, 0x80})
	f.Add([]byte{0xff, 0, 0, 0, 0, 0, 0, 1}, []byte{1, 5})
	f.Add([]byte{0, 0x1f, 0, 0, 0, 0, 0, 1}, []byte{1, 0x8f, 0}) // overlong uvarint
	f.Fuzz(func(t *testing.T, k, v []byte) {
		r, err := decodeRecord(k, v)
		if err != nil {
			return
		}
		if r.id < 1 || r.id > MaxID || r.ttl < 1 || r.ttl > MaxTTL {
			t.Fatalf("decodeRecord(%x, %x) = %+v, out of range", k, v, r)
		}
		if !bytes.Equal(r.key(), k) || !bytes.Equal(r.value(), v) {
			t.Fatalf("decodeRecord(%x, %x) = %+v, which encodes as %x, %x", k, v, r, r.key(), r.value())
		}
	})
}
