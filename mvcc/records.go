package mvcc

import (
	"bytes"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// records is the key history as a read sees it: the bbolt bucket of its
// transaction, then the records of the batches acknowledged from the
// write-ahead log that no checkpoint had put in bbolt when the read
// began (pending, in key order, every key after the bucket's last).
// The committer's own reads see everything in its write transaction and
// have no pending records.
type records struct {
	b       *bolt.Bucket
	pending []walRecord
}

// Get returns the record stored under key, or nil.
func (r records) Get(key []byte) []byte {
	if len(r.pending) > 0 && bytes.Compare(key, r.pending[0].key) >= 0 {
		i := sort.Search(len(r.pending), func(i int) bool { return bytes.Compare(r.pending[i].key, key) >= 0 })
		if i < len(r.pending) && bytes.Equal(r.pending[i].key, key) {
			return r.pending[i].value
		}
		return nil
	}
	return r.b.Get(key)
}

// Cursor returns a cursor over the bucket's records, then the pending ones.
func (r records) Cursor() *recordCursor {
	return &recordCursor{b: r.b.Cursor(), pending: r.pending}
}

// recordCursor walks records as bbolt's cursor walks a bucket. It is in
// the pending records when inPending is set, at index i (len(pending)
// past the end).
type recordCursor struct {
	b         *bolt.Cursor
	pending   []walRecord
	inPending bool
	i         int
}

func (c *recordCursor) at() ([]byte, []byte) {
	if c.i < 0 || c.i >= len(c.pending) {
		return nil, nil
	}
	return c.pending[c.i].key, c.pending[c.i].value
}

// enterPending moves to pending record i.
func (c *recordCursor) enterPending(i int) ([]byte, []byte) {
	c.inPending, c.i = true, i
	return c.at()
}

// First moves to the first record.
func (c *recordCursor) First() ([]byte, []byte) {
	c.inPending = false
	if k, v := c.b.First(); k != nil {
		return k, v
	}
	return c.enterPending(0)
}

// Last moves to the last record.
func (c *recordCursor) Last() ([]byte, []byte) {
	if len(c.pending) > 0 {
		return c.enterPending(len(c.pending) - 1)
	}
	c.inPending = false
	return c.b.Last()
}

// Seek moves to the first record at or after key.
func (c *recordCursor) Seek(key []byte) ([]byte, []byte) {
	c.inPending = false
	if k, v := c.b.Seek(key); k != nil {
		return k, v
	}
	i := sort.Search(len(c.pending), func(i int) bool { return bytes.Compare(c.pending[i].key, key) >= 0 })
	return c.enterPending(i)
}

// Next moves to the next record.
func (c *recordCursor) Next() ([]byte, []byte) {
	if c.inPending {
		if c.i < len(c.pending) {
			c.i++
		}
		return c.at()
	}
	if k, v := c.b.Next(); k != nil {
		return k, v
	}
	return c.enterPending(0)
}

// Prev moves to the record before.
func (c *recordCursor) Prev() ([]byte, []byte) {
	if c.inPending {
		if c.i > 0 {
			c.i--
			return c.at()
		}
		c.inPending = false
		c.i = 0
		return c.b.Last()
	}
	return c.b.Prev()
}
