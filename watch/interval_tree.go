package watch

import (
	"bytes"
	"math/rand/v2"

	"github.com/httpkv/httpkv/keyrange"
)

// compareRanges orders ranges by start, then by upper bound. The tree
// holds ranges of more than one key only, whose Limit is End or nil.
func compareRanges(a, b keyrange.Range) int {
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return keyrange.CompareLimits(a.Limit(), b.Limit())
}

// intervalTree holds the range watchers, one node per distinct range, so
// that the watchers of a key are found in O(log n + matches) however many
// ranges there are. It is a treap (a binary search tree on the range,
// heap-ordered on a random priority, so balanced in expectation) in which
// every node also knows the highest end in its subtree: a subtree whose
// highest end is at or below a key cannot contain a range holding it.
type intervalTree struct {
	root *itNode
}

type itNode struct {
	r           keyrange.Range
	limit       []byte // r.Limit(): nil = +infinity
	maxEnd      []byte // highest limit in this subtree; nil = +infinity
	prio        uint64
	left, right *itNode
	watchers    watcherBag
}

func (n *itNode) fix() {
	n.maxEnd = n.limit
	for _, c := range []*itNode{n.left, n.right} {
		if c != nil && keyrange.CompareLimits(c.maxEnd, n.maxEnd) > 0 {
			n.maxEnd = c.maxEnd
		}
	}
}

func rotateRight(n *itNode) *itNode {
	l := n.left
	n.left, l.right = l.right, n
	n.fix()
	l.fix()
	return l
}

func rotateLeft(n *itNode) *itNode {
	r := n.right
	n.right, r.left = r.left, n
	n.fix()
	r.fix()
	return r
}

// add puts w in the node for r, creating it if needed.
func (t *intervalTree) add(r keyrange.Range, w *watcher) {
	t.root = t.insert(t.root, r, w)
}

func (t *intervalTree) insert(n *itNode, r keyrange.Range, w *watcher) *itNode {
	if n == nil {
		n = &itNode{r: r, limit: r.Limit(), prio: rand.Uint64()}
		n.watchers.add(w)
		n.fix()
		return n
	}
	switch c := compareRanges(r, n.r); {
	case c == 0:
		n.watchers.add(w)
		return n
	case c < 0:
		n.left = t.insert(n.left, r, w)
		if n.left.prio > n.prio {
			return rotateRight(n)
		}
	default:
		n.right = t.insert(n.right, r, w)
		if n.right.prio > n.prio {
			return rotateLeft(n)
		}
	}
	n.fix()
	return n
}

// remove takes w out of the node for r, and the node out of the tree once
// it has no watchers.
func (t *intervalTree) remove(r keyrange.Range, w *watcher) {
	t.root = t.delete(t.root, r, w)
}

func (t *intervalTree) delete(n *itNode, r keyrange.Range, w *watcher) *itNode {
	if n == nil {
		return nil
	}
	switch c := compareRanges(r, n.r); {
	case c < 0:
		n.left = t.delete(n.left, r, w)
	case c > 0:
		n.right = t.delete(n.right, r, w)
	default:
		n.watchers.remove(w)
		if n.watchers.len() > 0 {
			return n
		}
		return t.unlink(n)
	}
	n.fix()
	return n
}

// unlink removes n by rotating it down until it has at most one child.
func (t *intervalTree) unlink(n *itNode) *itNode {
	switch {
	case n.left == nil:
		return n.right
	case n.right == nil:
		return n.left
	case n.left.prio > n.right.prio:
		n = rotateRight(n)
		n.right = t.unlink(n.right)
	default:
		n = rotateLeft(n)
		n.left = t.unlink(n.left)
	}
	n.fix()
	return n
}

// stab calls fn for the watchers of every range that contains key.
func (t *intervalTree) stab(key []byte, fn func(*watcher)) {
	stab(t.root, key, fn)
}

func stab(n *itNode, key []byte, fn func(*watcher)) {
	for n != nil && keyrange.AboveKey(n.maxEnd, key) {
		stab(n.left, key, fn)
		if bytes.Compare(n.r.Key, key) > 0 {
			return // every range to the right starts above key too
		}
		if keyrange.AboveKey(n.limit, key) {
			n.watchers.each(fn)
		}
		n = n.right
	}
}
