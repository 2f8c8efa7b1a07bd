package bench

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	oneTo100 := make([]time.Duration, 100)
	for i := range oneTo100 {
		oneTo100[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample", []time.Duration{3 * time.Millisecond}, 99, 3 * time.Millisecond},
		{"p50 of 1..100ms", oneTo100, 50, 50 * time.Millisecond},
		{"p90 of 1..100ms", oneTo100, 90, 90 * time.Millisecond},
		{"p99 of 1..100ms", oneTo100, 99, 99 * time.Millisecond},
		{"p100 is the max", oneTo100, 100, 100 * time.Millisecond},
		{"small exact values", []time.Duration{1, 2, 3, 4}, 50, 2},
		{"negative counts as zero", []time.Duration{-5, 10}, 50, 0},
		{"one slow outlier", append(make([]time.Duration, 99), time.Second), 99, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			// Order must not matter.
			for _, i := range rand.Perm(len(tt.samples)) {
				h.Record(tt.samples[i])
			}
			got := h.Percentile(tt.p)
			if !near(got, tt.want) {
				t.Errorf("Percentile(%v) of %d samples = %v, want %v (within 1/64)", tt.p, len(tt.samples), got, tt.want)
			}
		})
	}
}

func TestHistogramMaxAndMerge(t *testing.T) {
	var a, b Histogram
	a.Record(time.Millisecond)
	b.Record(7 * time.Second)
	b.Record(time.Microsecond)
	a.Merge(&b)
	if a.Count() != 3 || a.Max() != 7*time.Second {
		t.Fatalf("after Merge: Count() = %d, Max() = %v, want 3 and 7s", a.Count(), a.Max())
	}
	if got := a.Percentile(50); !near(got, time.Millisecond) {
		t.Errorf("Percentile(50) after Merge = %v, want 1ms", got)
	}
}

func TestBucketPrecision(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		v := rnd.Int64N(1 << rnd.IntN(63))
		b := bucketOf(uint64(v))
		if b < 0 || b >= numBuckets {
			t.Fatalf("bucketOf(%d) = %d, outside [0, %d)", v, b, numBuckets)
		}
		if got := time.Duration(bucketValue(b)); !near(got, time.Duration(v)) {
			t.Fatalf("bucketValue(bucketOf(%d)) = %d, want within 1/64", v, got)
		}
		if v > 0 && bucketOf(uint64(v-1)) > b {
			t.Fatalf("bucketOf(%d) > bucketOf(%d): buckets out of order", v-1, v)
		}
	}
}

// near reports whether got is within the histogram's precision of want.
func near(got, want time.Duration) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d <= want/64
}
