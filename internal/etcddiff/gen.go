package etcddiff

import (
	"bytes"
	"math/rand/v2"

	"github.com/httpkv/httpkv/kv"
)

// Keys, range ends and values of the random requests.
var (
	// diffKeys is a small keyspace with prefixes, so that random keys and
	// ranges collide often.
	diffKeys = []string{"a", "a/1", "a/2", "b", "b/1", "b/2", "c", "d"}
	// diffBounds are extra range ends, between and beyond the keys.
	diffBounds = []string{"a/", "b0", "c\x00", "e", "\xff"}
	diffValues = []string{"", "x", "y", "z", "xy"}
)

// Step is one request of a sequence: an Op, or a compaction when Compact
// is set.
type Step struct {
	kv.Op
	Compact int64
}

// State is what a Gen reads of the store: revisions to aim at, values
// to compare with.
type State interface {
	// Rev is the store's current revision.
	Rev() int64
	// CompactRev is its compact revision (0 before the first).
	CompactRev() int64
	// Get returns the current version of key, if it exists.
	Get(key []byte) (kv.KeyValue, bool)
}

// Gen makes the random requests of one sequence. It reads one side (the
// store under test or etcd) to aim revisions and compares at values that
// exist; both answer the same until the test fails, so a seed always
// makes the same sequence from the same state.
type Gen struct {
	rng       *rand.Rand
	s         State
	maxTxnOps int
	rev       int64 // the store's revision before the step being made
}

// NewGen returns the generator of seed's sequence, which reads s. Some
// txns are sized around maxTxnOps, the limit of both sides.
func NewGen(seed uint64, s State, maxTxnOps int) *Gen {
	return &Gen{rng: rand.New(rand.NewPCG(seed, 0x657463642d646966)), s: s, maxTxnOps: maxTxnOps}
}

// txnMode is what may fail in a txn: see the package doc on etcd before 3.6.
type txnMode int

const (
	failingPuts   txnMode = iota // ignore_value/ignore_lease on any key
	failingRanges                // ranges at any revision
	failingBoth                  // both, which only etcd 3.6 checks op by op
)

func (g *Gen) chance(p float64) bool { return g.rng.Float64() < p }

func (g *Gen) pick(xs []string) []byte { return []byte(xs[g.rng.IntN(len(xs))]) }

// Step makes the next request.
func (g *Gen) Step() Step {
	g.rev = g.s.Rev()
	switch p := g.rng.Float64(); {
	case p < 0.28:
		return Step{Op: kv.Op{Put: g.put(failingPuts)}}
	case p < 0.40:
		return Step{Op: kv.Op{Delete: g.delete(false)}}
	case p < 0.64:
		return Step{Op: kv.Op{Range: g.rangeOp(failingRanges)}}
	case p < 0.95:
		return Step{Op: kv.Op{Txn: g.txn()}}
	}
	return Step{Compact: g.compactRev()}
}

// compactRev picks a revision to compact at: mostly a valid one, else one
// at or below the compact revision or above the current one.
func (g *Gen) compactRev() int64 {
	compacted := g.s.CompactRev()
	switch p := g.rng.Float64(); {
	case p < 0.6 && g.rev > compacted:
		return compacted + 1 + g.rng.Int64N(g.rev-compacted)
	case p < 0.8 && compacted >= 1:
		return 1 + g.rng.Int64N(compacted)
	}
	return g.rev + 1 + g.rng.Int64N(3)
}

// bounds picks a key and a range end: a single key, a prefix, everything
// from the key on, or an arbitrary end (possibly at or below the key).
func (g *Gen) bounds() (key, end []byte) {
	key = g.pick(diffKeys)
	if g.chance(0.04) {
		key = []byte{0}
	}
	switch p := g.rng.Float64(); {
	case p < 0.4:
		return key, nil
	case p < 0.55:
		return key, []byte{0}
	case p < 0.8:
		end = bytes.Clone(key)
		end[len(end)-1]++
		return key, end
	case p < 0.9:
		return key, g.pick(diffKeys)
	}
	return key, g.pick(diffBounds)
}

func (g *Gen) put(mode txnMode) *kv.PutRequest {
	r := &kv.PutRequest{Key: g.pick(diffKeys), Value: g.pick(diffValues), PrevKV: g.chance(0.5)}
	switch p := g.rng.Float64(); {
	case p < 0.01:
		r.Key = nil // invalid: empty key
	case p < 0.03:
		r.IgnoreValue = true // invalid: a value with ignore_value
		r.Value = []byte("v")
	case mode == failingRanges:
	case p < 0.12:
		r.IgnoreValue, r.Value = true, nil
	case p < 0.16:
		r.IgnoreLease = true
	}
	return r
}

// delete makes a delete; inTxn keeps its end above its key.
func (g *Gen) delete(inTxn bool) *kv.DeleteRequest {
	key, end := g.bounds()
	if inTxn && len(end) > 0 && bytes.Compare(end, key) <= 0 && !bytes.Equal(end, []byte{0}) {
		end = nil
	}
	if !inTxn && g.chance(0.01) {
		key = nil // invalid: empty key
	}
	return &kv.DeleteRequest{Key: key, End: end, PrevKV: g.chance(0.5)}
}

func (g *Gen) rangeOp(mode txnMode) *kv.RangeOp {
	key, end := g.bounds()
	o := kv.RangeOptions{
		Revision:  g.readRev(mode),
		CountOnly: g.chance(0.08),
		KeysOnly:  g.chance(0.15),
	}
	if g.chance(0.35) {
		o.Limit = 1 + g.rng.Int64N(4)
	}
	if g.chance(0.5) {
		o.SortTarget = kv.SortTarget(g.rng.IntN(5))
		o.SortOrder = kv.SortOrder(g.rng.IntN(3))
	}
	for _, f := range []*int64{&o.MinModRevision, &o.MaxModRevision, &o.MinCreateRevision, &o.MaxCreateRevision} {
		if g.chance(0.1) {
			*f = 1 + g.rng.Int64N(g.rev+1)
		}
	}
	return &kv.RangeOp{Key: key, End: end, Options: o}
}

// readRev picks a revision to read at. Unless ranges may fail, it is one
// the store can serve (even inside a txn that writes: ranges are checked
// against the state before it).
func (g *Gen) readRev(mode txnMode) int64 {
	compacted := g.s.CompactRev()
	lo := max(compacted, 1)
	p := g.rng.Float64()
	switch {
	case p < 0.5:
		return 0
	case mode == failingPuts || p < 0.7:
		return lo + g.rng.Int64N(g.rev-lo+1)
	case p < 0.8:
		return 1 + g.rng.Int64N(g.rev) // maybe compacted
	case p < 0.9 && compacted > 0:
		return compacted
	}
	return g.rev + 1 + g.rng.Int64N(2)
}

// txn makes a top-level txn: rarely one sized around the op limit, else a
// random one whose puts either may collide with each other and with its
// deletes, or use distinct keys and single-key deletes.
func (g *Gen) txn() *kv.TxnRequest {
	if g.chance(0.04) {
		return g.bigTxn()
	}
	mode := txnMode(g.rng.IntN(int(failingBoth) + 1))
	var r *kv.TxnRequest
	if g.chance(0.5) {
		r = g.randomTxn(mode, 0, nil)
	} else {
		keys := g.rng.Perm(len(diffKeys))
		r = g.randomTxn(mode, 0, &keys)
	}
	if hasPut(r) {
		dropOpenDeletes(r)
	}
	return r
}

// randomTxn makes a txn at nesting depth. With free set, the keys its puts
// and deletes write are drawn without replacement from the indexes in free,
// so no key is written twice on any path.
func (g *Gen) randomTxn(mode txnMode, depth int, free *[]int) *kv.TxnRequest {
	r := &kv.TxnRequest{}
	for range g.rng.IntN(4) {
		r.Compare = append(r.Compare, g.compare())
	}
	r.Success = g.ops(mode, depth, free, g.rng.IntN(5))
	r.Failure = g.ops(mode, depth, free, g.rng.IntN(4))
	return r
}

func (g *Gen) ops(mode txnMode, depth int, free *[]int, n int) []kv.Op {
	var ops []kv.Op
	for range n {
		p := g.rng.Float64()
		switch {
		case p < 0.35:
			ops = append(ops, kv.Op{Range: g.rangeOp(mode)})
		case p < 0.9 && free != nil && len(*free) == 0:
			// no key left to write
		case p < 0.7:
			put := g.put(mode)
			if free != nil && len(put.Key) > 0 {
				put.Key = []byte(diffKeys[(*free)[0]])
				*free = (*free)[1:]
			}
			ops = append(ops, kv.Op{Put: put})
		case p < 0.9:
			del := g.delete(true)
			if free != nil {
				del.Key, del.End = []byte(diffKeys[(*free)[0]]), nil
				*free = (*free)[1:]
			}
			ops = append(ops, kv.Op{Delete: del})
		case depth < 2:
			ops = append(ops, kv.Op{Txn: g.randomTxn(mode, depth+1, free)})
		}
	}
	return ops
}

// compare makes a compare, aiming half the time at the key's current value
// so that both branches are taken.
func (g *Gen) compare() kv.Compare {
	key, end := g.bounds()
	if len(end) > 0 && g.chance(0.5) {
		end = nil
	}
	c := kv.Compare{Key: key, End: end, Result: kv.CompareResult(g.rng.IntN(4))}
	cur, _ := g.s.Get(key)
	aim := g.chance(0.5)
	switch p := g.rng.Float64(); {
	case p < 0.25:
		c.Target, c.Value = kv.CompareValue, g.pick(diffValues)
		if aim {
			c.Value = cur.Value
		}
	case p < 0.5:
		c.Target, c.Number = kv.CompareVersion, g.rng.Int64N(4)
		if aim {
			c.Number = cur.Version
		}
	case p < 0.7:
		c.Target, c.Number = kv.CompareCreate, g.rng.Int64N(g.rev+2)
		if aim {
			c.Number = cur.CreateRevision
		}
	case p < 0.95:
		c.Target, c.Number = kv.CompareMod, g.rng.Int64N(g.rev+2)
		if aim {
			c.Number = cur.ModRevision
		}
	default:
		c.Target = kv.CompareLease
	}
	return c
}

// bigTxn makes a txn of range ops sized at or one past the op limit: in
// its compares, a branch, or a nested txn that gets what its parent leaves.
func (g *Gen) bigTxn() *kv.TxnRequest {
	ranges := func(n int) []kv.Op {
		ops := make([]kv.Op, n)
		for i := range ops {
			ops[i] = kv.Op{Range: &kv.RangeOp{Key: g.pick(diffKeys), Options: kv.RangeOptions{CountOnly: true}}}
		}
		return ops
	}
	n := g.maxTxnOps + g.rng.IntN(2)
	r := &kv.TxnRequest{}
	switch g.rng.IntN(4) {
	case 0:
		for range n {
			r.Compare = append(r.Compare, kv.Compare{Key: g.pick(diffKeys), Target: kv.CompareVersion, Result: kv.CompareGreater, Number: -1})
		}
	case 1:
		r.Success = ranges(n)
	case 2:
		r.Failure = ranges(n)
	default:
		// The parent uses k+1 ops, which leaves maxTxnOps-1-k to the
		// nested txn.
		k := 1 + g.rng.IntN(g.maxTxnOps-2)
		m := g.maxTxnOps - 1 - k + g.rng.IntN(2)
		r.Success = append(ranges(k), kv.Op{Txn: &kv.TxnRequest{Success: ranges(m)}})
	}
	return r
}

// hasPut reports whether any branch of r, at any depth, has a put.
func hasPut(r *kv.TxnRequest) bool {
	for _, branch := range [][]kv.Op{r.Success, r.Failure} {
		for _, op := range branch {
			if op.Put != nil || (op.Txn != nil && hasPut(op.Txn)) {
				return true
			}
		}
	}
	return false
}

// dropOpenDeletes turns deletes with range end "\x00" into single-key
// deletes (see the package doc on etcd's duplicate-key check).
func dropOpenDeletes(r *kv.TxnRequest) {
	for _, branch := range [][]kv.Op{r.Success, r.Failure} {
		for _, op := range branch {
			switch {
			case op.Delete != nil && bytes.Equal(op.Delete.End, []byte{0}):
				op.Delete.End = nil
			case op.Txn != nil:
				dropOpenDeletes(op.Txn)
			}
		}
	}
}
