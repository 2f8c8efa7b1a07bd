package etcd

import (
	"bytes"
	"sort"
	"sync"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/watch"
)

// window holds the namespace's most recent revisions, as the upstream
// watch received them (events with their previous versions), bounded in
// bytes: watchers a little behind catch up from memory, and only those
// further behind cost etcd a watch of their own.
//
// Its invariant: every event of the namespace at a revision in
// [start, end] is held, in revision order, and end is the newest revision
// published to the scheduler (added before it is published, so a watcher
// behind finds in the window whatever the scheduler has published).
// Evicting the oldest revision moves start past it.
type window struct {
	mu    sync.RWMutex
	limit int64 // bytes
	size  int64
	start int64
	end   int64
	revs  []heldRevision // revs[head:] are held, ascending
	head  int
}

// heldRevision is one revision's events in the window.
type heldRevision struct {
	rev    int64
	events []kv.Event
	size   int64
}

// newWindow returns an empty window after revision rev.
func newWindow(rev, limit int64) *window {
	return &window{limit: limit, start: rev + 1, end: rev}
}

// add appends revision rev's events, evicting the oldest revisions past
// the bound. Revisions come in order, each once.
func (w *window) add(rev int64, events []kv.Event) {
	h := heldRevision{rev: rev, events: events}
	for i := range events {
		h.size += watch.EventSize(&events[i])
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if rev <= w.end {
		return
	}
	w.revs = append(w.revs, h)
	w.size += h.size
	w.end = rev
	for w.size > w.limit && w.head < len(w.revs) {
		old := &w.revs[w.head]
		w.size -= old.size
		w.start = old.rev + 1
		*old = heldRevision{}
		w.head++
	}
	if w.head > 64 && w.head > len(w.revs)/2 {
		w.revs = append([]heldRevision(nil), w.revs[w.head:]...)
		w.head = 0
	}
}

// advance records that every revision up to rev is held: a progress
// notification said there is no event before it.
func (w *window) advance(rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.end = max(w.end, rev)
}

// restart empties the window, which then holds every revision from rev
// on: the upstream watch lost the revisions before (etcd compacted them
// while it was away).
func (w *window) restart(rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.revs, w.head, w.size = nil, 0, 0
	w.start, w.end = rev, max(w.end, rev-1)
}

// bounds returns the first revision held in full and the last.
func (w *window) bounds() (start, end int64) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.start, w.end
}

// read calls fn with the events of revisions from to to, oldest first,
// without their previous versions, until fn returns false. It returns
// false, having called nothing, when the window no longer holds from.
func (w *window) read(from, to int64, fn func(kv.Event) bool) bool {
	return w.each(from, to, func(ev *kv.Event) bool {
		e := *ev
		e.PrevKV = nil
		return fn(e)
	})
}

// each is read with the events as held, previous versions included; fn
// must not change them.
func (w *window) each(from, to int64, fn func(*kv.Event) bool) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if from < w.start {
		return false
	}
	held := w.revs[w.head:]
	i := sort.Search(len(held), func(i int) bool { return held[i].rev >= from })
	for ; i < len(held) && held[i].rev <= to; i++ {
		for j := range held[i].events {
			if !fn(&held[i].events[j]) {
				return true
			}
		}
	}
	return true
}

// prevKV returns the previous version of key before revision rev, as the
// upstream watch received it with the event of key at rev, and whether
// the window still holds that event.
func (w *window) prevKV(rev int64, key []byte) (*kv.KeyValue, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if rev < w.start || rev > w.end {
		return nil, false
	}
	held := w.revs[w.head:]
	i := sort.Search(len(held), func(i int) bool { return held[i].rev >= rev })
	if i == len(held) || held[i].rev != rev {
		return nil, false
	}
	for j := range held[i].events {
		if ev := &held[i].events[j]; bytes.Equal(ev.KV.Key, key) {
			return ev.PrevKV, true
		}
	}
	return nil, false
}

// stats returns the revisions and bytes held.
func (w *window) stats() (revisions int, bytes int64) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return len(w.revs) - w.head, w.size
}
