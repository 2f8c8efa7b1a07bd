package lease

import (
	"container/heap"
	"time"
)

// expiryHeap is a min-heap of leases ordered by when the expiry loop next
// looks at them (entry.check). Each entry knows its index so that
// KeepAlive and Revoke fix or remove it in O(log n).
type expiryHeap []*entry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].check.Before(h[j].check) }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *expiryHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}

// Expired returns the channel the expiry loop reports expired leases on,
// in batches of at most RevokeRate × CheckInterval IDs. The consumer
// revokes each (see the package documentation), checking in the same
// write that the lease is still expired: since it was reported, the ID
// may have been revoked and granted again. A lease still here
// RetryInterval after it was reported is reported again, so a revoke that
// failed is retried. Close closes the channel.
func (l *Lessor) Expired() <-chan []int64 { return l.expired }

// run is the expiry loop: every CheckInterval it reports the leases that
// have expired, at most perTick of them.
func (l *Lessor) run() {
	defer close(l.done)
	defer close(l.expired)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			// Only this goroutine sends, so with room in the channel the
			// send cannot block. Without room the consumer is behind:
			// take nothing, rather than mark leases reported that are not.
			if len(l.expired) == cap(l.expired) {
				continue
			}
			if ids := l.findExpired(l.now()); len(ids) > 0 {
				l.expired <- ids
			}
		}
	}
}

// findExpired returns up to perTick leases whose check time has come, the
// soonest first, and moves each one's check time RetryInterval ahead.
// Their expiry stays in the past: KeepAlive cannot revive them.
func (l *Lessor) findExpired(now time.Time) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []int64
	for len(l.heap) > 0 && len(ids) < l.perTick {
		e := l.heap[0]
		if e.check.After(now) {
			break
		}
		e.check = now.Add(l.retry)
		heap.Fix(&l.heap, 0)
		ids = append(ids, e.id)
	}
	return ids
}
