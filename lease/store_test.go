package lease_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
)

// op is one store write of an attachment test.
type op struct {
	desc string
	do   func(*mvcc.Store) error
}

func putOp(key string, id int64) op {
	return op{desc: "put " + key, do: func(s *mvcc.Store) error {
		_, err := s.Put(leasedPut(key, id))
		return err
	}}
}

func putIgnoreLeaseOp(key string) op {
	return op{desc: "put " + key + " ignoring lease", do: func(s *mvcc.Store) error {
		_, err := s.Put(kv.PutRequest{Key: []byte(key), Value: []byte("w"), IgnoreLease: true})
		return err
	}}
}

func deleteOp(key, end string) op {
	return op{desc: "delete " + key, do: func(s *mvcc.Store) error {
		_, err := s.DeleteRange(kv.DeleteRequest{Key: []byte(key), End: []byte(end)})
		return err
	}}
}

func txnPutOp(key string, id int64) op {
	return op{desc: "txn put " + key, do: func(s *mvcc.Store) error {
		put := leasedPut(key, id)
		_, err := s.Txn(kv.TxnRequest{Success: []kv.Op{{Put: &put}}})
		return err
	}}
}

func TestAttachment(t *testing.T) {
	cases := []struct {
		name  string
		ops   []op
		want1 []string // keys attached to lease 1
		want2 []string // keys attached to lease 2
	}{
		{
			name:  "put attaches",
			ops:   []op{putOp("a", 1), putOp("b", 1), putOp("c", 2)},
			want1: []string{"a", "b"}, want2: []string{"c"},
		},
		{
			name:  "put with another lease moves the key",
			ops:   []op{putOp("a", 1), putOp("a", 2)},
			want2: []string{"a"},
		},
		{
			name:  "put without lease detaches",
			ops:   []op{putOp("a", 1), putOp("a", 0)},
			want1: nil,
		},
		{
			name:  "ignore lease keeps the current one",
			ops:   []op{putOp("a", 2), putIgnoreLeaseOp("a")},
			want2: []string{"a"},
		},
		{
			name:  "delete detaches",
			ops:   []op{putOp("a", 1), putOp("b", 1), putOp("c", 2), deleteOp("a", "c")},
			want2: []string{"c"},
		},
		{
			name:  "txn put moves the key",
			ops:   []op{putOp("a", 1), txnPutOp("a", 2)},
			want2: []string{"a"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, lease.Config{})
			mustGrant(t, e, 1, 60)
			mustGrant(t, e, 2, 60)
			for _, o := range tc.ops {
				if err := o.do(e.store); err != nil {
					t.Fatalf("%s = %v", o.desc, err)
				}
			}
			if got := keysOf(t, e.lessor, 1); !slices.Equal(got, tc.want1) {
				t.Errorf("Keys(1) = %q, want %q", got, tc.want1)
			}
			if got := keysOf(t, e.lessor, 2); !slices.Equal(got, tc.want2) {
				t.Errorf("Keys(2) = %q, want %q", got, tc.want2)
			}
		})
	}
}

func TestPutWithUnknownLeaseWritesNothing(t *testing.T) {
	e := newEnv(t, lease.Config{})
	mustGrant(t, e, 1, 60)
	mustPut(t, e, leasedPut("a", 1))
	rev := e.store.Rev()

	for _, r := range []kv.PutRequest{leasedPut("a", 2), leasedPut("b", 2)} {
		if _, err := e.store.Put(r); !errors.Is(err, kv.ErrLeaseNotFound) {
			t.Fatalf("Put(%q, lease=2) = %v, want ErrLeaseNotFound", r.Key, err)
		}
	}
	if got := e.store.Rev(); got != rev {
		t.Fatalf("Rev() after failed puts = %d, want %d", got, rev)
	}
	if got := liveKeys(t, e.store); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("keys after failed puts = %q, want [a]", got)
	}
	if got := keysOf(t, e.lessor, 1); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("Keys(1) = %q, want [a]", got)
	}
}

func TestRevokeDeletesAttachedKeysInOneRevision(t *testing.T) {
	e := newEnv(t, lease.Config{})
	mustGrant(t, e, 1, 60)
	mustGrant(t, e, 2, 60)
	for _, k := range []string{"c", "a", "b"} {
		mustPut(t, e, leasedPut(k, 1))
	}
	mustPut(t, e, leasedPut("d", 2))
	mustPut(t, e, leasedPut("e", 0))
	rev := e.store.Rev()

	got, err := e.manager.Revoke(1, nil)
	if err != nil {
		t.Fatalf("Revoke(1) = %v", err)
	}
	evs := history(t, e.store, rev+1)
	if got != rev+1 || len(evs) != 3 {
		t.Fatalf("Revoke(1) = revision %d with %d events, want revision %d with 3", got, len(evs), rev+1)
	}
	var deleted []string
	for _, ev := range evs {
		if ev.Type != kv.EventDelete || ev.KV.ModRevision != rev+1 {
			t.Fatalf("History(%d) has %v of %q at %d, want only deletes at %d", rev+1, ev.Type, ev.KV.Key, ev.KV.ModRevision, rev+1)
		}
		deleted = append(deleted, string(ev.KV.Key))
	}
	if !slices.Equal(deleted, []string{"a", "b", "c"}) {
		t.Fatalf("History(%d) deletes %q, want [a b c]", rev+1, deleted)
	}
	if got := liveKeys(t, e.store); !slices.Equal(got, []string{"d", "e"}) {
		t.Fatalf("keys after revoke = %q, want [d e]", got)
	}
	if e.lessor.Lookup(1) {
		t.Fatalf("Lookup(1) after revoke = true, want false")
	}
	if got := e.lessor.Leases(); !slices.Equal(got, []int64{2}) {
		t.Fatalf("Leases() after revoke = %v, want [2]", got)
	}

	// The record is gone too: a restart does not bring the lease back.
	e.close()
	e = openEnv(t, e.path, lease.Config{})
	if got := e.lessor.Leases(); !slices.Equal(got, []int64{2}) {
		t.Fatalf("Leases() after restart = %v, want [2]", got)
	}
}

func TestRevokeWithoutKeysMakesNoRevision(t *testing.T) {
	e := newEnv(t, lease.Config{})
	mustGrant(t, e, 1, 60)
	rev := e.store.Rev()
	got, err := e.manager.Revoke(1, nil)
	if err != nil || got != rev || e.store.Rev() != rev {
		t.Fatalf("Revoke(1) = %d, %v; Rev() = %d, want revision %d", got, err, e.store.Rev(), rev)
	}
}

func TestRestartRestoresLeasesAndAttachments(t *testing.T) {
	c := newClock()
	e := newEnv(t, lease.Config{Now: c.Now})
	mustGrant(t, e, 1, 10)
	mustGrant(t, e, 2, 30)
	mustGrant(t, e, 3, 60)
	mustPut(t, e, leasedPut("a", 1))
	mustPut(t, e, leasedPut("b", 1))
	mustPut(t, e, leasedPut("c", 2))
	mustPut(t, e, leasedPut("b", 2)) // moved
	mustPut(t, e, leasedPut("d", 3))
	mustPut(t, e, leasedPut("d", 0)) // detached
	mustPut(t, e, leasedPut("e", 3))
	if _, err := e.store.DeleteRange(kv.DeleteRequest{Key: []byte("e")}); err != nil {
		t.Fatalf("DeleteRange(e) = %v", err)
	}
	c.Advance(8 * time.Second)
	if _, err := e.lessor.KeepAlive(2); err != nil {
		t.Fatalf("KeepAlive(2) = %v", err)
	}
	e.close()

	c.Advance(time.Minute) // down longer than any TTL
	e = openEnv(t, e.path, lease.Config{Now: c.Now})
	want := []struct {
		id, ttl int64
		keys    []string
	}{
		{1, 10, []string{"a"}},
		{2, 30, []string{"b", "c"}},
		{3, 60, nil},
	}
	if got := e.lessor.Leases(); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("Leases() after restart = %v, want [1 2 3]", got)
	}
	for _, w := range want {
		st, err := e.lessor.TimeToLive(w.id, true)
		if err != nil || st.TTL != w.ttl || st.Remaining != w.ttl || !slices.Equal(strs(st.Keys), w.keys) {
			t.Errorf("TimeToLive(%d, true) after restart = %+v, %v, want TTL and Remaining %d, keys %q", w.id, st, err, w.ttl, w.keys)
		}
	}
	if _, err := e.lessor.KeepAlive(1); err != nil {
		t.Fatalf("KeepAlive(1) after restart = %v", err)
	}
	// Attachments keep working on the restored leases.
	mustPut(t, e, leasedPut("a", 3))
	if got := keysOf(t, e.lessor, 3); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("Keys(3) = %q, want [a]", got)
	}
}

// TestRestoreRefusesKeysOfMissingLease: a key attached to a lease with no
// record, which only an edited file holds, is refused, not dropped.
func TestRestoreRefusesKeysOfMissingLease(t *testing.T) {
	e := newEnv(t, lease.Config{})
	mustGrant(t, e, 1, 60)
	mustPut(t, e, leasedPut("a", 1))
	// Lose the record but not the key, as only an edited file could.
	if _, err := e.store.Write(func(tx *mvcc.WriteTxn) error {
		return tx.UnsafeDelete([]byte("lease"), []byte{0, 0, 0, 0, 0, 0, 0, 1})
	}); err != nil {
		t.Fatalf("delete record = %v", err)
	}
	e.close()

	l := lease.New(lease.Config{})
	defer l.Close()
	s, err := mvcc.Open(e.path, l, nil, mvcc.Options{NoFsync: true})
	if err != nil {
		t.Fatalf("mvcc.Open(%q) = %v", e.path, err)
	}
	defer s.Close()
	r, err := s.Read()
	if err != nil {
		t.Fatalf("Read() = %v", err)
	}
	defer r.End()
	err = l.Restore(r.UnsafeForEach)
	if !errors.Is(err, lease.ErrCorrupt) || !strings.Contains(err.Error(), `"a" is attached to lease 1`) {
		t.Fatalf("Restore() with key a on lease 1 and no record of it = %v, want ErrCorrupt naming both", err)
	}
}

// TestRestoreKeepsKeysDetachedBeforeRestore: a key attached to a lease
// with no record and detached again before Restore (a key put with a
// lease, then put without one, both below the records read) is not an
// orphan.
func TestRestoreKeepsKeysDetachedBeforeRestore(t *testing.T) {
	l := lease.New(lease.Config{})
	defer l.Close()
	l.Attach(7, []byte("a"))
	l.Detach(7, []byte("a"))
	if err := l.Restore(func([]byte, func(k, v []byte) error) error { return nil }); err != nil {
		t.Fatalf("Restore() after Attach(7, a), Detach(7, a) = %v, want nil", err)
	}
	if got := l.Leases(); len(got) != 0 {
		t.Fatalf("Leases() = %v, want none", got)
	}
}

func TestRestoreRejectsCorruptRecord(t *testing.T) {
	cases := []struct {
		name       string
		key, value []byte
	}{
		{name: "short key", key: []byte{1}, value: []byte{1, 10}},
		{name: "zero id", key: make([]byte, 8), value: []byte{1, 10}},
		{name: "unknown format", key: []byte{0, 0, 0, 0, 0, 0, 0, 1}, value: []byte{9, 10}},
		{name: "zero ttl", key: []byte{0, 0, 0, 0, 0, 0, 0, 1}, value: []byte{1, 0}},
		{name: "trailing bytes", key: []byte{0, 0, 0, 0, 0, 0, 0, 1}, value: []byte{1, 10, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, lease.Config{})
			if _, err := e.store.Write(func(tx *mvcc.WriteTxn) error {
				return tx.UnsafePut([]byte("lease"), tc.key, tc.value)
			}); err != nil {
				t.Fatalf("write record = %v", err)
			}
			r, err := e.store.Read()
			if err != nil {
				t.Fatalf("Read() = %v", err)
			}
			defer r.End()
			l := lease.New(lease.Config{})
			defer l.Close()
			if err := l.Restore(r.UnsafeForEach); !errors.Is(err, lease.ErrCorrupt) {
				t.Fatalf("Restore(key %x, value %x) = %v, want ErrCorrupt", tc.key, tc.value, err)
			}
		})
	}
}
