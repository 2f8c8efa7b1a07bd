package reconcile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// items is a cursor over a list of items.
type items struct {
	list []Item
	err  error // returned once the list is done
}

func (c *items) Next() (Item, bool, error) {
	if len(c.list) == 0 {
		return Item{}, false, c.err
	}
	it := c.list[0]
	c.list = c.list[1:]
	return it, true, nil
}

// parse reads "a=1 b=2@5" as items: key=value, @mod optional.
func parse(s string) []Item {
	var out []Item
	for _, f := range strings.Fields(s) {
		var it Item
		if at := strings.IndexByte(f, '@'); at >= 0 {
			fmt.Sscan(f[at+1:], &it.Mod)
			f = f[:at]
		}
		k, v, _ := strings.Cut(f, "=")
		it.Key, it.Value = []byte(k), []byte(v)
		out = append(out, it)
	}
	return out
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cur, want string
		replace   bool
		changes   string // kind:key, in order
		unchanged int64
	}{
		{name: "empty", changes: ""},
		{name: "create into empty", want: "a=1 b=2", changes: "create:a create:b"},
		{name: "merge keeps others", cur: "a=1 c=3", want: "b=2", changes: "create:b"},
		{name: "replace deletes others", cur: "a=1 c=3", want: "b=2", replace: true, changes: "delete:a create:b delete:c"},
		{name: "equal values unchanged", cur: "a=1 b=2", want: "a=1 b=3", changes: "update:b", unchanged: 1},
		{name: "same mod revision unchanged", cur: "a=1@4", want: "a=1@4", unchanged: 1},
		{name: "other mod revision, same value", cur: "a=1@5", want: "a=1@4", unchanged: 1},
		{name: "other mod revision, other value", cur: "a=2@5", want: "a=1@4", changes: "update:a"},
		{name: "replace everything", cur: "a=1 b=2", replace: true, changes: "delete:a delete:b"},
		{name: "interleaved", cur: "b=1 d=1 f=1", want: "a=1 b=1 c=1 d=2 g=1", replace: true,
			changes: "create:a create:c update:d delete:f create:g", unchanged: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			res, err := Diff(&items{list: parse(tc.cur)}, &items{list: parse(tc.want)}, tc.replace, func(ch *Change) error {
				got = append(got, ch.Kind.String()+":"+string(ch.Key()))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got, " "); g != tc.changes {
				t.Errorf("Diff(%q, %q, replace=%v) changes %q, want %q", tc.cur, tc.want, tc.replace, g, tc.changes)
			}
			if res.Unchanged != tc.unchanged {
				t.Errorf("Unchanged = %d, want %d", res.Unchanged, tc.unchanged)
			}
			counts := map[string]int64{}
			for _, c := range got {
				counts[strings.SplitN(c, ":", 2)[0]]++
			}
			if res.Created != counts["create"] || res.Updated != counts["update"] || res.Deleted != counts["delete"] {
				t.Errorf("counts %d/%d/%d, want %v", res.Created, res.Updated, res.Deleted, counts)
			}
			if res.Changes() != int64(len(got)) {
				t.Errorf("Changes() = %d, want %d", res.Changes(), len(got))
			}
		})
	}
}

func TestDiffListsAtMostMaxKeys(t *testing.T) {
	var want []Item
	n := kv.MaxListedKeys + 5
	for i := range n {
		want = append(want, Item{Key: fmt.Appendf(nil, "k%06d", i), Value: []byte("v")})
	}
	res, err := Diff(&items{}, &items{list: want}, false, func(*Change) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != int64(n) || len(res.CreatedKeys) != kv.MaxListedKeys {
		t.Fatalf("Created %d with %d listed, want %d with %d", res.Created, len(res.CreatedKeys), n, kv.MaxListedKeys)
	}
	if string(res.CreatedKeys[0]) != "k000000" || string(res.CreatedKeys[kv.MaxListedKeys-1]) != fmt.Sprintf("k%06d", kv.MaxListedKeys-1) {
		t.Fatalf("listed %q..%q, want the first keys in order", res.CreatedKeys[0], res.CreatedKeys[kv.MaxListedKeys-1])
	}
}

func TestDiffStopsOnErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := Diff(&items{err: boom}, &items{list: parse("a=1")}, false, func(*Change) error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("a cursor's error: got %v, want boom", err)
	}
	calls := 0
	_, err = Diff(&items{}, &items{list: parse("a=1 b=1")}, false, func(*Change) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("fn's error: got %v after %d calls, want boom after 1", err, calls)
	}
}

func TestBuilder(t *testing.T) {
	b := NewBuilder(keyrange.Prefix([]byte("p/")))
	for i, k := range []string{"p/c", "p/a", "p/b"} {
		if err := b.Add([]byte(k), []byte("v"+k), i+1); err != nil {
			t.Fatal(err)
		}
	}
	e, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range e.Len() {
		k, v := e.At(i)
		if string(v) != "v"+string(k) {
			t.Errorf("At(%d) = %q, %q: the value is not the key's", i, k, v)
		}
		keys = append(keys, string(k))
	}
	if !slices.Equal(keys, []string{"p/a", "p/b", "p/c"}) || e.Line(0) != 2 {
		t.Errorf("keys %q (first from line %d), want p/a p/b p/c, the first from line 2", keys, e.Line(0))
	}

	for _, tc := range []struct {
		name  string
		scope keyrange.Range
		keys  []string
		want  string
	}{
		{"outside the prefix", keyrange.Prefix([]byte("p/")), []string{"p/a", "q"}, `line 2: the key "q" is outside the range the import names (the prefix "p/")`},
		{"outside a single key", keyrange.Single([]byte("k")), []string{"j"}, `the key "k"`},
		{"empty key", keyrange.All(), []string{""}, "line 1: the key is empty"},
		{"twice", keyrange.Range{}, []string{"a", "b", "a"}, `lines 1 and 3 both give the key "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder(tc.scope)
			var err error
			for i, k := range tc.keys {
				if err = b.Add([]byte(k), nil, i+1); err != nil {
					break
				}
			}
			if err == nil {
				_, err = b.Finish()
			}
			if !errors.Is(err, kv.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("building %q in %v: %v, want an invalid argument saying %q", tc.keys, tc.scope, err, tc.want)
			}
		})
	}
}

func TestEntriesCursorFeedsDiff(t *testing.T) {
	b := &Builder{}
	_ = b.Add([]byte("b"), []byte("2"), 1)
	_ = b.Add([]byte("a"), []byte("1"), 2)
	e, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	res, err := Diff(&items{list: parse("a=1 c=3")}, EntriesCursor(e), true, func(ch *Change) error {
		got = append(got, ch.Kind.String()+":"+string(ch.Key())+"="+string(ch.Want.Value))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got, " "); g != "create:b=2 delete:c=" || res.Unchanged != 1 {
		t.Errorf("changes %q, %d unchanged; want create:b=2 delete:c=, 1 unchanged", g, res.Unchanged)
	}
}
