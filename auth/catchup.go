package auth

import (
	"sync"
	"time"
)

// catchUpGap is the least time between two syncs a catch-up starts: what
// holders of tokens that will never be good again (a deleted user's) can
// make a store ask of the shared state, however many they send.
const catchUpGap = 20 * time.Millisecond

// catchUp brings a shared state up to date for a token whose claims the
// store does not know yet: one gateway issued it right after a change the
// other has not loaded (a user just created, a password just changed).
// Requests that ask while no sync has started share the next one; a sync
// already running may have read the state before the token was issued,
// so it does not count for them. At most one sync runs at a time, and
// each request waits for at most two.
type catchUp struct {
	sync func() error

	run  sync.Mutex // held by the request running a sync
	mu   sync.Mutex // guards next and last
	next *wave      // the sync not started yet; nil when none is wanted
	last time.Time  // when the last sync started
}

// wave is one sync and the requests that wait for it.
type wave struct{ err error }

// do returns once a sync that started after it was called has ended, with
// that sync's error.
func (c *catchUp) do() error {
	c.mu.Lock()
	if c.next == nil {
		c.next = &wave{}
	}
	w := c.next
	c.mu.Unlock()

	c.run.Lock()
	defer c.run.Unlock()
	c.mu.Lock()
	if c.next != w {
		// Another request ran w while this one waited for run.
		c.mu.Unlock()
		return w.err
	}
	c.next = nil
	wait := time.Until(c.last.Add(catchUpGap))
	c.mu.Unlock()
	if wait > 0 {
		time.Sleep(wait)
	}
	c.mu.Lock()
	c.last = time.Now()
	c.mu.Unlock()
	w.err = c.sync()
	return w.err
}
