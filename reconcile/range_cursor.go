package reconcile

import (
	"context"
	"errors"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// Bounds of one page of a RangeCursor: pageKeys keys, and pageBytes of
// keys and values unless a single key is larger.
const (
	pageKeys  = 1000
	pageBytes = 4 << 20
)

// Ranger reads one page of a range: a backend's Range.
type Ranger interface {
	Range(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error)
}

// RangeCursor reads the keys of a range at one revision, a page at a
// time, however many they are: it holds one page, of at most pageKeys
// keys and pageBytes of keys and values (or one key, when a key is larger
// than that), and each page starts after the last key of the one before.
// The first page pins the revision when none was given. Once the compact
// revision passes that revision, the next page fails with a
// *kv.CompactedError.
type RangeCursor struct {
	ctx    context.Context
	ranger Ranger
	r      keyrange.Range
	rev    int64
	from   []byte // where the next page starts; nil once the range is done
	page   []kv.KeyValue
	i      int
	count  int64
	limit  int64
	read   bool // the first page has been read
}

// NewRangeCursor returns a cursor over the keys of r at rev (0: the
// current revision, which the first page pins).
func NewRangeCursor(ctx context.Context, ranger Ranger, r keyrange.Range, rev int64) *RangeCursor {
	return &RangeCursor{ctx: ctx, ranger: ranger, r: r, rev: rev, from: r.Key, limit: pageKeys}
}

// Start reads the first page, if not yet read: Revision and Count are
// known from then on.
func (c *RangeCursor) Start() error {
	if c.read {
		return nil
	}
	return c.fetch()
}

// Revision is the revision the cursor reads at, once started.
func (c *RangeCursor) Revision() int64 { return c.rev }

// Count is the number of keys of the range at Revision, once started.
func (c *RangeCursor) Count() int64 { return c.count }

// NextKV returns the next key in key order; ok is false after the last.
// It is the cursor's until the next call.
func (c *RangeCursor) NextKV() (*kv.KeyValue, bool, error) {
	for c.i == len(c.page) {
		if c.read && c.from == nil {
			return nil, false, nil
		}
		if err := c.fetch(); err != nil {
			return nil, false, err
		}
	}
	c.i++
	return &c.page[c.i-1], true, nil
}

// Next returns the next key as a side of a diff.
func (c *RangeCursor) Next() (Item, bool, error) {
	e, ok, err := c.NextKV()
	if !ok {
		return Item{}, false, err
	}
	return Item{Key: e.Key, Value: e.Value, Mod: e.ModRevision}, true, nil
}

// fetch reads the page from c.from. A page whose keys and values pass
// pageBytes is asked again with half the keys, down to a single key,
// which is read whatever its size; the next page asks for twice as many
// again, up to pageKeys.
func (c *RangeCursor) fetch() error {
	for {
		opts := kv.RangeOptions{Revision: c.rev, Limit: c.limit}
		if c.limit > 1 {
			opts.Limits = &kv.ReadLimits{MaxBytes: pageBytes}
		}
		res, err := c.ranger.Range(c.ctx, kv.RangeRequest{Key: c.from, End: c.r.End, Options: opts})
		var tle *kv.TooLargeError
		if errors.As(err, &tle) && c.limit > 1 {
			c.limit /= 2
			continue
		}
		if err != nil {
			return err
		}
		if !c.read {
			c.read = true
			c.count = res.Count
			if c.rev == 0 {
				c.rev = res.Revision
			}
		}
		c.page, c.i = res.KVs, 0
		c.limit = min(c.limit*2, pageKeys)
		if !res.More || len(res.KVs) == 0 || c.r.IsSingle() {
			c.from = nil
			return nil
		}
		last := res.KVs[len(res.KVs)-1].Key
		c.from = append(append(make([]byte, 0, len(last)+1), last...), 0)
		return nil
	}
}
