package mvcc

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/httpkv/httpkv/kv"
)

// fakeLessor is a Lessor whose leases never expire: a fixed set of lease
// IDs exists, and it records which keys the store attached to which lease.
type fakeLessor struct {
	mu       sync.Mutex
	exists   map[int64]bool
	attached map[int64]map[string]bool
}

func newFakeLessor(ids ...int64) *fakeLessor {
	l := &fakeLessor{exists: make(map[int64]bool), attached: make(map[int64]map[string]bool)}
	for _, id := range ids {
		l.exists[id] = true
	}
	return l
}

func (l *fakeLessor) Lookup(id int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.exists[id]
}

func (l *fakeLessor) Keys(id int64) ([][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.exists[id] {
		return nil, kv.ErrLeaseNotFound
	}
	var keys [][]byte
	for _, k := range slices.Sorted(maps.Keys(l.attached[id])) {
		keys = append(keys, []byte(k))
	}
	return keys, nil
}

func (l *fakeLessor) Attach(id int64, key []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.attached[id] == nil {
		l.attached[id] = make(map[string]bool)
	}
	l.attached[id][string(key)] = true
}

func (l *fakeLessor) Detach(id int64, key []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.attached[id], string(key))
}

// String lists the attached keys by lease, in order, as showLeases does.
func (l *fakeLessor) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	byLease := make(map[int64][]string)
	for id, keys := range l.attached {
		for k := range keys {
			byLease[id] = append(byLease[id], k)
		}
	}
	return showLeases(byLease)
}

// showLeases formats the keys attached to each lease, leaving out leases
// with none.
func showLeases(byLease map[int64][]string) string {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(byLease)) {
		keys := byLease[id]
		if len(keys) == 0 {
			continue
		}
		slices.Sort(keys)
		fmt.Fprintf(&b, "%d:%q ", id, keys)
	}
	return b.String()
}
