package watch

import "sync"

// notes calls the Notify functions of watches (kv.WatchRequest.Notify)
// outside the store's locks: the function is the reader's code, and
// called under Store.mu or a watcher's mu it would join the reader's
// locks to the store's in one order across packages, and a reader that
// called back into the store would deadlock it. A signal under a lock
// only lists the function (under the notes' own lock, which is held for
// nothing else); Publish calls what it listed once it has let go of the
// store's lock, so that its readers are woken as they were, at once and
// once per commit, and the other signals (a watch ended, a progress
// bookmark, a catch-up, an eviction) are called by the notes' goroutine,
// which Store.Close stops after the watchers' last signals.
type notes struct {
	mu      sync.Mutex
	pending []func()
	spare   []func()
	stopped bool
	kick    chan struct{}
	done    chan struct{}
}

func newNotes() *notes {
	n := &notes{kick: make(chan struct{}, 1), done: make(chan struct{})}
	go n.run()
	return n
}

// add lists f, to be called by whoever flushes first; kick wakes the
// goroutine to call it (Publish does not: it flushes itself). After stop
// every watcher is done, and none is signalled any more.
func (n *notes) add(f func(), kick bool) {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	n.pending = append(n.pending, f)
	n.mu.Unlock()
	if kick {
		select {
		case n.kick <- struct{}{}:
		default:
		}
	}
}

// flush calls every function listed. The caller holds no lock of the
// store's.
func (n *notes) flush() {
	n.mu.Lock()
	fs := n.pending
	n.pending, n.spare = n.spare[:0], nil
	n.mu.Unlock()
	for i, f := range fs {
		f()
		fs[i] = nil
	}
	n.mu.Lock()
	if n.spare == nil {
		n.spare = fs[:0]
	}
	n.mu.Unlock()
}

func (n *notes) run() {
	defer close(n.done)
	for range n.kick {
		n.flush()
		n.mu.Lock()
		stopped := n.stopped
		n.mu.Unlock()
		if stopped {
			return
		}
	}
}

// stop calls what is listed, and stops the goroutine once it has.
func (n *notes) stop() {
	n.mu.Lock()
	n.stopped = true
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
	<-n.done
	n.flush()
}
