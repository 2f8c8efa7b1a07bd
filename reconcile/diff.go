package reconcile

import (
	"bytes"

	"github.com/httpkv/httpkv/kv"
)

// Item is one key of a side of a diff. Its slices are valid until the
// next call of the cursor that returned it.
type Item struct {
	Key, Value []byte
	// Mod is the key's mod revision when the item was read from the
	// store, 0 otherwise: two items of one key with the same mod
	// revision are the same version, and their values are not compared.
	Mod int64
}

// Cursor yields the items of one side of a diff in ascending key order,
// each key once; ok is false after the last.
type Cursor interface {
	Next() (it Item, ok bool, err error)
}

// Kind is what a diff does to a key.
type Kind int

const (
	Create Kind = iota
	Update
	Delete
)

func (k Kind) String() string {
	switch k {
	case Create:
		return "create"
	case Update:
		return "update"
	}
	return "delete"
}

// Change is one key a diff writes: Cur is the key as the store holds it
// (zero for Create), Want as wanted (zero for Delete). Its slices are
// valid only during the call it is given to.
type Change struct {
	Kind Kind
	Cur  Item
	Want Item
}

// Key is the key the change writes.
func (c *Change) Key() []byte {
	if c.Kind == Delete {
		return c.Cur.Key
	}
	return c.Want.Key
}

// Diff walks cur, the keys of a range as the store holds them, and want,
// the keys as wanted, together in key order, and calls fn with each key
// that must change: created when only want has it, updated when both have
// it with different values, and, with replace, deleted when only cur has
// it. Without replace a key only cur has is left alone and not counted.
// It returns the counts of every kind, unchanged included, and the first
// kv.MaxListedKeys keys of each kind that changes, in key order. An
// error from a cursor or fn ends the walk.
func Diff(cur, want Cursor, replace bool, fn func(*Change) error) (kv.RewriteResult, error) {
	var res kv.RewriteResult
	c, cok, err := cur.Next()
	if err != nil {
		return res, err
	}
	w, wok, err := want.Next()
	if err != nil {
		return res, err
	}
	var ch Change
	for cok || wok {
		var order int
		switch {
		case !wok:
			order = -1
		case !cok:
			order = 1
		default:
			order = bytes.Compare(c.Key, w.Key)
		}
		change := true
		switch {
		case order < 0 && replace:
			ch = Change{Kind: Delete, Cur: c}
		case order > 0:
			ch = Change{Kind: Create, Want: w}
		case order == 0 && !same(&c, &w):
			ch = Change{Kind: Update, Cur: c, Want: w}
		case order == 0:
			res.Unchanged++
			change = false
		default:
			change = false
		}
		if change {
			count(&res, &ch)
			if err := fn(&ch); err != nil {
				return res, err
			}
		}
		if order <= 0 {
			if c, cok, err = cur.Next(); err != nil {
				return res, err
			}
		}
		if order >= 0 {
			if w, wok, err = want.Next(); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// same reports whether the store's version of a key is the one wanted.
func same(cur, want *Item) bool {
	if want.Mod != 0 && want.Mod == cur.Mod {
		return true
	}
	return bytes.Equal(cur.Value, want.Value)
}

// count counts ch in r, and lists its key while the list has room.
func count(r *kv.RewriteResult, ch *Change) {
	var n *int64
	var list *[][]byte
	switch ch.Kind {
	case Create:
		n, list = &r.Created, &r.CreatedKeys
	case Update:
		n, list = &r.Updated, &r.UpdatedKeys
	default:
		n, list = &r.Deleted, &r.DeletedKeys
	}
	*n++
	if len(*list) < kv.MaxListedKeys {
		*list = append(*list, bytes.Clone(ch.Key()))
	}
}

// EntriesCursor returns a cursor over e.
func EntriesCursor(e kv.Entries) Cursor { return &entriesCursor{e: e} }

type entriesCursor struct {
	e kv.Entries
	i int
}

func (c *entriesCursor) Next() (Item, bool, error) {
	if c.i >= c.e.Len() {
		return Item{}, false, nil
	}
	k, v := c.e.At(c.i)
	c.i++
	return Item{Key: k, Value: v}, true, nil
}
