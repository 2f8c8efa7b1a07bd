package patch

import (
	"context"
	"errors"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// oneKey is a store of one key, enough for Update: a range of the key,
// and txns of a mod compare, a put and ranges. Before each txn it runs
// meddle, the writes of other clients.
type oneKey struct {
	rev    int64
	cur    *kv.KeyValue
	meddle func(s *oneKey)
	txns   int
}

func (s *oneKey) put(key, value []byte, lease int64) {
	s.rev++
	next := kv.KeyValue{Key: key, Value: value, CreateRevision: s.rev, ModRevision: s.rev, Version: 1, Lease: lease}
	if s.cur != nil {
		next.CreateRevision, next.Version = s.cur.CreateRevision, s.cur.Version+1
	}
	s.cur = &next
}

func (s *oneKey) read() kv.RangeResult {
	res := kv.RangeResult{Revision: s.rev}
	if s.cur != nil {
		res.KVs = []kv.KeyValue{*s.cur}
	}
	return res
}

func (s *oneKey) Range(context.Context, kv.RangeRequest) (kv.RangeResult, error) {
	return s.read(), nil
}

func (s *oneKey) Txn(_ context.Context, r kv.TxnRequest, _ kv.LeaseGuard) (kv.TxnResult, error) {
	s.txns++
	if s.meddle != nil {
		s.meddle(s)
	}
	var mod int64
	if s.cur != nil {
		mod = s.cur.ModRevision
	}
	ok := mod == r.Compare[0].Number
	branch := r.Failure
	if ok {
		branch = r.Success
	}
	res := kv.TxnResult{Succeeded: ok}
	for _, op := range branch {
		if op.Put != nil {
			lease := op.Put.Lease
			if op.Put.IgnoreLease {
				lease = s.cur.Lease
			}
			s.put(op.Put.Key, op.Put.Value, lease)
			res.Responses = append(res.Responses, kv.OpResult{Put: &kv.PutResult{Revision: s.rev}})
			continue
		}
		rr := s.read()
		res.Responses = append(res.Responses, kv.OpResult{Range: &rr})
	}
	res.Revision = s.rev
	return res, nil
}

func merge(t *testing.T, body string) func(*kv.KeyValue) ([]byte, error) {
	p, err := Parse(Merge, []byte(body), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return func(cur *kv.KeyValue) ([]byte, error) {
		if cur == nil {
			return p.Apply([]byte("k"), nil, false)
		}
		return p.Apply(cur.Key, cur.Value, true)
	}
}

func TestUpdateKeepsTheLease(t *testing.T) {
	s := &oneKey{}
	s.put([]byte("k"), []byte(`{"a":1}`), 7)
	res, err := Update(context.Background(), s, Request{Key: []byte("k"), Next: merge(t, `{"b":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.KV.Value) != `{"a":1,"b":2}` || res.KV.Lease != 7 || res.KV.Version != 2 || res.Revision != 2 {
		t.Fatalf("Update wrote %+v at %d, want {a:1,b:2} with lease 7, version 2, at 2", res.KV, res.Revision)
	}
}

func TestUpdateCreates(t *testing.T) {
	s := &oneKey{rev: 1}
	res, err := Update(context.Background(), s, Request{Key: []byte("k"), Next: merge(t, `{"b":2}`)})
	if err != nil || string(res.KV.Value) != `{"b":2}` || res.KV.Lease != 0 || res.KV.Version != 1 {
		t.Fatalf("Update of a missing key = %+v, %v; want {b:2}, version 1, no lease", res.KV, err)
	}
}

// TestUpdateRetries has another client change the key before Update's
// first two txns: Update must compute again from what the failed txn
// read, and keep that client's change.
func TestUpdateRetries(t *testing.T) {
	s := &oneKey{}
	s.put([]byte("k"), []byte(`{"n":0}`), 0)
	n := 0
	s.meddle = func(s *oneKey) {
		if n < 2 {
			n++
			s.put([]byte("k"), []byte(`{"n":`+string(rune('0'+n))+`}`), 0)
		}
	}
	res, err := Update(context.Background(), s, Request{Key: []byte("k"), Next: merge(t, `{"b":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.KV.Value) != `{"n":2,"b":1}` || s.txns != 3 {
		t.Fatalf("Update wrote %s after %d txns, want {n:2,b:1} after 3", res.KV.Value, s.txns)
	}
}

func TestUpdateGivesUp(t *testing.T) {
	s := &oneKey{}
	s.put([]byte("k"), []byte(`{}`), 0)
	s.meddle = func(s *oneKey) { s.put([]byte("k"), []byte(`{}`), 0) }
	_, err := Update(context.Background(), s, Request{Key: []byte("k"), Next: merge(t, `{"b":1}`)})
	if !errors.Is(err, kv.ErrUnavailable) || s.txns != Attempts {
		t.Fatalf("Update under constant change = %v after %d txns, want unavailable after %d", err, s.txns, Attempts)
	}
}

func TestUpdateIfMatch(t *testing.T) {
	s := &oneKey{}
	s.put([]byte("k"), []byte(`{}`), 0)
	s.put([]byte("k"), []byte(`{"a":1}`), 0)
	_, err := Update(context.Background(), s, Request{Key: []byte("k"), IfMatch: 1, Next: merge(t, `{"b":1}`)})
	var ce *ChangedError
	if !errors.As(err, &ce) || ce.Current == nil || ce.Current.ModRevision != 2 || s.txns != 0 {
		t.Fatalf("Update with If-Match 1 of a key at 2 = %v (%d txns), want a ChangedError carrying the key at 2, no txn", err, s.txns)
	}
	// The key changes between the read and the write: no retry.
	s.meddle = func(s *oneKey) { s.put([]byte("k"), []byte(`{"c":1}`), 0) }
	_, err = Update(context.Background(), s, Request{Key: []byte("k"), IfMatch: 2, Next: merge(t, `{"b":1}`)})
	if !errors.As(err, &ce) || ce.Current.ModRevision != 3 || s.txns != 1 {
		t.Fatalf("Update with If-Match 2, changed meanwhile = %v after %d txns, want a ChangedError at 3 after 1", err, s.txns)
	}
	s.meddle = nil
	if _, err := Update(context.Background(), &oneKey{}, Request{Key: []byte("k"), IfMatch: -1, Next: merge(t, `{}`)}); !errors.As(err, &ce) || ce.Current != nil {
		t.Fatalf("Update with If-Match * of a missing key = %v, want a ChangedError with no key", err)
	}
}
