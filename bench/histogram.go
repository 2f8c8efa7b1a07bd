package bench

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// subBits sets the histogram's precision: each power of two is split into
// 1<<subBits linear buckets, so a recorded value is known to within
// 1/64 (1.6%) of itself.
const subBits = 6

// numBuckets covers every non-negative int64.
const numBuckets = (64 - subBits) << subBits

// Histogram counts durations in log-linear buckets, as HDR histograms do:
// constant memory whatever the number of samples, which matters when ten
// thousand watchers record millions of deliveries. It is safe for
// concurrent use; recording is one atomic add.
//
// Worked example with subBits = 6: values below 64ns are exact; 1000ns has
// bits.Len64 = 10, so shift = 3 and the bucket holds [1000, 1007].
type Histogram struct {
	counts [numBuckets]atomic.Uint64
	n      atomic.Uint64
	max    atomic.Int64
}

// bucketOf returns the bucket holding v >= 0.
func bucketOf(v uint64) int {
	if v < 1<<subBits {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1 // v>>shift is in [64, 128)
	return (shift+1)<<subBits + int(v>>shift) - 1<<subBits
}

// bucketValue returns the middle of bucket i's range.
func bucketValue(i int) int64 {
	if i < 1<<subBits {
		return int64(i)
	}
	shift := i>>subBits - 1
	low := uint64(i&(1<<subBits-1)+1<<subBits) << shift
	return int64(low + (uint64(1)<<shift)/2)
}

// Record adds one duration; negative ones count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	h.counts[bucketOf(uint64(v))].Add(1)
	h.n.Add(1)
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	for i := range o.counts {
		if c := o.counts[i].Load(); c > 0 {
			h.counts[i].Add(c)
		}
	}
	h.n.Add(o.n.Load())
	for {
		m, om := h.max.Load(), o.max.Load()
		if om <= m || h.max.CompareAndSwap(m, om) {
			return
		}
	}
}

// Count is the number of durations recorded.
func (h *Histogram) Count() uint64 { return h.n.Load() }

// Max is the largest duration recorded, exactly.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max.Load()) }

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100): the
// smallest recorded duration that at least p% of the samples do not
// exceed, to the histogram's precision, and never above Max. It is 0 when
// nothing was recorded.
func (h *Histogram) Percentile(p float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	var seen uint64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			return min(time.Duration(bucketValue(i)), h.Max())
		}
	}
	return h.Max()
}
