package client

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestPutGetDelete(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	ctx := testContext(t)

	put, err := c.Put(ctx, "a/b", []byte("one"), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "a/b", GetOptions{})
	if err != nil || string(got.KV.Value) != "one" || got.KV.ModRevision != put.Header.Revision {
		t.Fatalf("Get(a/b) = %+v, %v; want one at revision %d", got, err, put.Header.Revision)
	}
	if !bytes.Contains(got.Raw, []byte(`"value":"one"`)) {
		t.Errorf("Get(a/b).Raw = %s, want the answer's body", got.Raw)
	}

	// If-Match on a stale revision: 412 with the key as it is.
	if _, err := c.Put(ctx, "a/b", []byte("two"), PutOptions{IfMatch: put.Header.Revision}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Put(ctx, "a/b", []byte("three"), PutOptions{IfMatch: put.Header.Revision})
	var e *Error
	if !errors.As(err, &e) || e.Status != 412 || e.Code != CodePreconditionFailed || e.KV == nil || string(e.KV.Value) != "two" {
		t.Fatalf("Put(If-Match stale) = %v, want 412 precondition_failed with the current kv", err)
	}
	if _, err := c.Put(ctx, "a/b", []byte("x"), PutOptions{IfAbsent: true}); !HasCode(err, CodePreconditionFailed) {
		t.Errorf("Put(IfAbsent) on an existing key = %v, want precondition_failed", err)
	}

	del, err := c.Delete(ctx, Key("a/b"), DeleteOptions{PrevKV: true})
	if err != nil || del.Deleted != 1 || len(del.PrevKVs) != 1 || string(del.PrevKVs[0].Value) != "two" {
		t.Fatalf("Delete(a/b) = %+v, %v; want 1 deleted, two before", del, err)
	}
	_, err = c.Get(ctx, "a/b", GetOptions{})
	if !errors.As(err, &e) || e.Status != 404 || e.Code != CodeKeyNotFound || e.Revision == 0 {
		t.Fatalf("Get(deleted) = %v, want 404 key_not_found with the revision", err)
	}
}

// TestKeyBytes: keys and values that are not UTF-8, and keys whose
// bytes a URL path would change (dots, slashes, spaces, percent signs),
// come back as they were put.
func TestKeyBytes(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	ctx := testContext(t)
	for _, key := range []string{"\xff\xfe/k", "a//b", "a/../b", "..", "sp ace/%2F/?#", "é/ü"} {
		value := []byte("v\x00\xff" + key)
		if _, err := c.Put(ctx, key, value, PutOptions{}); err != nil {
			t.Fatalf("Put(%q) = %v", key, err)
		}
		got, err := c.Get(ctx, key, GetOptions{})
		if err != nil || string(got.KV.Key) != key || !bytes.Equal(got.KV.Value, value) {
			t.Fatalf("Get(%q) = %+v, %v; want the key and %q", key, got, err, value)
		}
	}
	var keys []string
	for page, err := range c.List(ctx, All(), ListOptions{KeysOnly: true}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range page.KVs {
			keys = append(keys, string(kv.Key))
		}
	}
	if len(keys) != 6 {
		t.Errorf("List(every key) = %q, want the 6 keys put", keys)
	}
}

// TestListPages: List follows the pages, every one at the first one's
// revision (a key put meanwhile is not in them), and stops at Limit.
func TestListPages(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	ctx := testContext(t)
	for i := range 25 {
		if _, err := c.Put(ctx, fmt.Sprintf("p/%02d", i), []byte{byte('a' + i)}, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		limit, pageSize int64
		want, pages     int
	}{
		{0, 10, 25, 3}, {7, 10, 7, 1}, {12, 5, 12, 3}, {0, 0, 25, 1}, {25, 5, 25, 5},
	} {
		var n, pages int
		for page, err := range c.List(ctx, Prefix("p/"), ListOptions{Limit: tt.limit, PageSize: tt.pageSize}) {
			if err != nil {
				t.Fatal(err)
			}
			if pages == 0 {
				// A key put after the first page is not in the next ones.
				if _, err := c.Put(ctx, "p/99", nil, PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for _, kv := range page.KVs {
				if want := fmt.Sprintf("p/%02d", n); string(kv.Key) != want {
					t.Fatalf("key %d = %q, want %q", n, kv.Key, want)
				}
				n++
			}
			pages++
		}
		if n != tt.want || pages != tt.pages {
			t.Errorf("List(limit %d, page %d) = %d keys in %d pages, want %d in %d", tt.limit, tt.pageSize, n, pages, tt.want, tt.pages)
		}
		if _, err := c.Delete(ctx, Key("p/99"), DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeasePages: Leases follows the pages of the list, in ascending ID.
func TestLeasePages(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	ctx := testContext(t)
	var want []int64
	for i := range 5 {
		l, err := c.Grant(ctx, 600, int64(100+i))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, l.ID)
	}
	var got []int64
	pages := 0
	for page, err := range c.Leases(ctx, LeaseListOptions{PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, l := range page.Leases {
			got = append(got, l.ID)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || pages != 3 {
		t.Errorf("Leases(page size 2) = %v in %d pages, want %v in 3", got, pages, want)
	}
}
