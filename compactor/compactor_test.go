package compactor

import (
	"sync"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, mode, retention string
		want                  Config
		wantErr               bool
	}{
		{"off", "periodic", "0", Config{Mode: Periodic}, false},
		{"hours", "periodic", "2", Config{Mode: Periodic, Period: 2 * time.Hour}, false},
		{"duration", "periodic", "30m", Config{Mode: Periodic, Period: 30 * time.Minute}, false},
		{"revisions", "revision", "1000", Config{Mode: Revision, Revisions: 1000}, false},
		{"bad mode", "hourly", "1", Config{}, true},
		{"bad periodic", "periodic", "soon", Config{}, true},
		{"bad revision", "revision", "1h", Config{}, true},
		{"negative", "revision", "-1", Config{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig(tt.mode, tt.retention)
			if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
				t.Fatalf("ParseConfig(%q, %q) = %+v, %v; want %+v, err %v", tt.mode, tt.retention, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPeriodicTarget(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var samples []sample
	var target int64
	// One sample a minute, revision growing by 10 a minute, period 5m.
	for i := 0; i <= 7; i++ {
		samples, target = periodicTarget(samples, sample{at: t0.Add(time.Duration(i) * time.Minute), rev: int64(10 * (i + 1))}, 5*time.Minute)
		want := int64(0)
		if i >= 5 {
			want = int64(10 * (i - 5 + 1)) // the sample taken 5 minutes before
		}
		if target != want {
			t.Fatalf("after sample %d: target %d, want %d", i, target, want)
		}
	}
	if len(samples) > 6 {
		t.Fatalf("kept %d samples, want old ones dropped", len(samples))
	}
}

// nopStore is a store the compactor never needs to compact.
type nopStore struct{}

func (nopStore) Rev() int64                          { return 1 }
func (nopStore) CompactRev() int64                   { return 0 }
func (nopStore) Compact(int64) (<-chan error, error) { return nil, nil }

// TestCloseConcurrent closes compactors from many goroutines at once:
// Close is idempotent and safe to call concurrently, so none panics
// (closing the stop channel twice) and all return once the loop is done.
func TestCloseConcurrent(t *testing.T) {
	const closers = 8
	for range 200 {
		c := New(Config{Mode: Revision, Revisions: 1}, nopStore{}, nil)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range closers {
			wg.Go(func() {
				<-start
				c.Close()
			})
		}
		close(start)
		wg.Wait()
		select {
		case <-c.done:
		default:
			t.Fatal("Close returned before the compactor's loop ended")
		}
	}
}
