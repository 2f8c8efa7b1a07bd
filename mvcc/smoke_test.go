package mvcc

import (
	"path/filepath"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

func TestSmoke(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Put(kv.PutRequest{Key: []byte("a"), Value: []byte("1")})
	if err != nil || r.Revision != 2 {
		t.Fatalf("put = %+v, %v", r, err)
	}
	r, err = s.Put(kv.PutRequest{Key: []byte("a"), Value: []byte("2"), PrevKV: true})
	if err != nil || r.Revision != 3 || string(r.PrevKV.Value) != "1" {
		t.Fatalf("put = %+v, %v", r, err)
	}
	rr, err := s.Range([]byte("a"), nil, kv.RangeOptions{})
	if err != nil || len(rr.KVs) != 1 || rr.KVs[0].Version != 2 || rr.KVs[0].CreateRevision != 2 {
		t.Fatalf("range = %+v, %v", rr, err)
	}
	rr, err = s.Range([]byte("a"), nil, kv.RangeOptions{Revision: 2})
	if err != nil || string(rr.KVs[0].Value) != "1" {
		t.Fatalf("range = %+v, %v", rr, err)
	}
	d, err := s.DeleteRange(kv.DeleteRequest{Key: []byte("a"), End: []byte{0}})
	if err != nil || d.Deleted != 1 || d.Revision != 4 {
		t.Fatalf("delete = %+v, %v", d, err)
	}
	done, err := s.Compact(4)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := s.Range([]byte("a"), nil, kv.RangeOptions{Revision: 3}); err == nil {
		t.Fatal("want compacted")
	}
	tr, err := s.Txn(kv.TxnRequest{
		Compare: []kv.Compare{{Key: []byte("a"), Target: kv.CompareVersion, Result: kv.CompareEqual, Number: 0}},
		Success: []kv.Op{{Put: &kv.PutRequest{Key: []byte("a"), Value: []byte("x")}}, {Range: &kv.RangeOp{Key: []byte("a")}}},
	})
	if err != nil || !tr.Succeeded || tr.Revision != 5 || len(tr.Responses[1].Range.KVs) != 1 {
		t.Fatalf("txn = %+v, %v", tr, err)
	}
	s.Close()
	s, err = Open(s.Path(), nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Rev() != 5 || s.CompactRev() != 4 {
		t.Fatalf("reopen rev %d compact %d", s.Rev(), s.CompactRev())
	}
	rr, err = s.Range([]byte("a"), nil, kv.RangeOptions{})
	if err != nil || string(rr.KVs[0].Value) != "x" || rr.KVs[0].Version != 1 {
		t.Fatalf("range = %+v, %v", rr, err)
	}
	if err := s.Defrag(); err != nil {
		t.Fatal(err)
	}
	rr, err = s.Range([]byte("a"), nil, kv.RangeOptions{})
	if err != nil || string(rr.KVs[0].Value) != "x" {
		t.Fatalf("range after defrag = %+v, %v", rr, err)
	}
}
