package auth

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// heapInUse returns the bytes of live heap objects after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestLimiterTableBounded fails logins for 30,000 distinct users of
// the longest valid name, each from an address of its own: the table
// keeps its fixed number of entries, least recently used out first, and
// the memory it holds stays a few hundred bytes an entry.
func TestLimiterTableBounded(t *testing.T) {
	l := newLimiter(time.Now, limiterEntries)
	before := heapInUse()
	const n = 30_000
	for i := range n {
		a := newAttempt(fmt.Sprintf("%0256d", i), fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255))
		if !l.begin(&a) {
			t.Fatalf("attempt %d refused: a fresh user at a fresh address", i)
		}
		l.end(&a, true)
	}
	if got := l.len(); got != limiterEntries {
		t.Errorf("after %d failed logins the table holds %d entries, want its size %d", n, got, limiterEntries)
	}
	held := heapInUse() - before
	t.Logf("%d entries hold %d bytes (%d an entry)", l.len(), held, held/int64(l.len()))
	if limit := int64(limiterEntries * 512); held > limit {
		t.Errorf("the table holds %d bytes, want at most %d (512 an entry)", held, limit)
	}
	// The most recent attempts are still counted.
	last := newAttempt(fmt.Sprintf("%0256d", n-1), fmt.Sprintf("10.%d.%d.%d", (n-1)>>16, (n-1)>>8&255, (n-1)&255))
	l.mu.Lock()
	e, ok := l.lru.Peek(last.keys[0])
	l.mu.Unlock()
	if !ok || e.l.TokensAt(time.Now()) >= failedBurst {
		t.Errorf("the last failure is not counted: entry %v, %v", e, ok)
	}
	runtime.KeepAlive(l)
}

func TestClientNet(t *testing.T) {
	cases := []struct{ addr, want string }{
		{"10.1.2.3", "10.1.2.3"},
		{"::ffff:10.1.2.3", "10.1.2.3"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an address", "not an address"},
	}
	for _, tc := range cases {
		if got := clientNet(tc.addr); got != tc.want {
			t.Errorf("clientNet(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
