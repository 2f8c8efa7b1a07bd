package mvcc

import (
	"math/rand/v2"
	"strings"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// modelGen makes TestModel's random requests. The keyspace, values,
// leases and revisions are small, so requests collide often: the same key
// written twice in a txn, compares that hold, ranges that cut generations,
// reads at and around the compact revision.
type modelGen struct {
	rng *rand.Rand
	m   *model
	// keys are the keys written; bounds adds range ends between and beyond
	// them; prefixes are for prefix ranges.
	keys, bounds, prefixes, values []string
	leases                         []int64 // lease IDs, existing or not
}

func newModelGen(rng *rand.Rand, m *model, leases []int64) *modelGen {
	keys := strings.Fields("a a/x a/y b b/x c d")
	return &modelGen{
		rng:      rng,
		m:        m,
		keys:     keys,
		bounds:   append(strings.Fields("a/ a0 b/ b0 c0 e \xff"), keys...),
		prefixes: strings.Fields("a a/ b b/ c z"),
		values:   []string{"", "x", "y", "z", "xy"},
		leases:   leases,
	}
}

// chance is true once in n.
func (g *modelGen) chance(n int) bool { return g.rng.IntN(n) == 0 }

func (g *modelGen) pick(xs []string) []byte { return []byte(xs[g.rng.IntN(len(xs))]) }

func (g *modelGen) key() []byte { return g.pick(g.keys) }

// value is nil now and then, which the store must treat as empty.
func (g *modelGen) value() []byte {
	if g.chance(10) {
		return nil
	}
	return g.pick(g.values)
}

func (g *modelGen) lease() int64 {
	if g.chance(2) {
		return 0
	}
	return g.leases[g.rng.IntN(len(g.leases))]
}

// revision is a revision to read at: the current one (0) half the time,
// else one at or around the compact and current revisions.
func (g *modelGen) revision() int64 {
	if g.chance(2) {
		return 0
	}
	lo := max(1, g.m.compactRev-2)
	return lo + g.rng.Int64N(g.m.rev()+2-lo+1)
}

// someRev is a revision for a filter or compare, from the empty store to
// one past the current.
func (g *modelGen) someRev() int64 { return g.rng.Int64N(g.m.rev() + 2) }

// span is the key and end of a range: one key, [a, b) (maybe empty or
// inverted), a prefix, every key from one on, or everything.
func (g *modelGen) span() (key, end []byte) {
	switch g.rng.IntN(10) {
	case 0, 1, 2, 3:
		return g.key(), nil
	case 4:
		return g.key(), []byte{} // an empty end is one key too
	case 5, 6:
		return g.pick(g.bounds), g.pick(g.bounds)
	case 7:
		p := g.pick(g.prefixes)
		return p, keyrange.PrefixEnd(p)
	case 8:
		return g.key(), []byte{0}
	}
	return []byte{0}, []byte{0}
}

func (g *modelGen) put() kv.PutRequest {
	r := kv.PutRequest{Key: g.key(), Value: g.value(), Lease: g.lease(), PrevKV: g.chance(2)}
	if g.chance(6) {
		r.IgnoreValue = true
		if !g.chance(10) {
			r.Value = nil
		}
	}
	if g.chance(6) {
		r.IgnoreLease = true
		if !g.chance(10) {
			r.Lease = 0
		}
	}
	if g.chance(200) {
		r.Key = nil
	}
	return r
}

func (g *modelGen) deleteRange() kv.DeleteRequest {
	r := kv.DeleteRequest{PrevKV: g.chance(2)}
	r.Key, r.End = g.span()
	if g.chance(200) {
		r.Key = nil
	}
	return r
}

func (g *modelGen) rangeOp() kv.RangeOp {
	r := kv.RangeOp{Options: kv.RangeOptions{Revision: g.revision()}}
	r.Key, r.End = g.span()
	o := &r.Options
	if g.chance(2) {
		o.Limit = 1 + g.rng.Int64N(4)
	}
	if g.chance(2) {
		o.SortTarget = kv.SortTarget(g.rng.IntN(5))
		o.SortOrder = kv.SortOrder(g.rng.IntN(3))
	}
	o.KeysOnly = g.chance(5)
	o.CountOnly = g.chance(10)
	for _, f := range []*int64{&o.MinModRevision, &o.MaxModRevision, &o.MinCreateRevision, &o.MaxCreateRevision} {
		if g.chance(8) {
			*f = g.someRev()
		}
	}
	switch {
	case g.chance(200):
		o.Limit = -1
	case g.chance(200):
		o.SortTarget = kv.SortByValue + 1
	case g.chance(200):
		r.Key = nil
	}
	return r
}

func (g *modelGen) compare() kv.Compare {
	c := kv.Compare{Target: kv.CompareTarget(g.rng.IntN(5)), Result: kv.CompareResult(g.rng.IntN(4))}
	if g.chance(5) {
		c.Key, c.End = g.span()
	} else {
		c.Key = g.key()
	}
	switch c.Target {
	case kv.CompareValue:
		c.Value = g.value()
	case kv.CompareVersion:
		c.Number = g.rng.Int64N(4)
	case kv.CompareCreate, kv.CompareMod:
		c.Number = g.someRev()
		// Aim at the key's own revisions half the time, so equality holds.
		if kval, ok := g.m.current()[string(c.Key)]; ok && g.chance(2) {
			c.Number = kval.ModRevision
			if c.Target == kv.CompareCreate {
				c.Number = kval.CreateRevision
			}
		}
	case kv.CompareLease:
		c.Number = g.lease()
	}
	return c
}

// txn makes a txn nested at most two deep. With readOnly it has ranges
// only, so the store serves it from a read snapshot.
func (g *modelGen) txn(depth int, readOnly bool) kv.TxnRequest {
	var r kv.TxnRequest
	for range g.rng.IntN(4) {
		r.Compare = append(r.Compare, g.compare())
	}
	r.Success = g.ops(depth, readOnly)
	r.Failure = g.ops(depth, readOnly)
	return r
}

func (g *modelGen) ops(depth int, readOnly bool) []kv.Op {
	n := g.rng.IntN(4)
	if g.chance(40) {
		n = modelMaxTxnOps + 1
	}
	ops := make([]kv.Op, 0, n)
	for range n {
		ops = append(ops, g.op(depth, readOnly))
	}
	return ops
}

func (g *modelGen) op(depth int, readOnly bool) kv.Op {
	k := g.rng.IntN(10)
	switch {
	case k < 3 || (readOnly && k < 8):
		r := g.rangeOp()
		return kv.Op{Range: &r}
	case k < 6:
		r := g.put()
		return kv.Op{Put: &r}
	case k < 8:
		r := g.deleteRange()
		return kv.Op{Delete: &r}
	case depth < 2:
		r := g.txn(depth+1, readOnly)
		return kv.Op{Txn: &r}
	}
	r := g.rangeOp()
	return kv.Op{Range: &r}
}
