package watch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

func TestSmokeWatch(t *testing.T) {
	kval, err := mvcc.Open(filepath.Join(t.TempDir(), "db"), nil, nil, mvcc.Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kval.Close()
	s := observe(t, kval, Options{})
	defer s.Close()
	s.Put(kv.PutRequest{Key: []byte("a/1"), Value: []byte("x")}) // rev 2
	st, err := s.Watch(kv.WatchRequest{Key: []byte("a/"), End: []byte("a0"), StartRevision: 1, PrevKV: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s.Put(kv.PutRequest{Key: []byte("a/1"), Value: []byte("y")}) // rev 3
	s.Txn(kv.TxnRequest{Success: []kv.Op{
		{Put: &kv.PutRequest{Key: []byte("a/2"), Value: []byte("z")}},
		{Delete: &kv.DeleteRequest{Key: []byte("a/1")}},
	}}) // rev 4
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got []kv.Event
	for len(got) < 4 {
		rs, err := st.Recv(ctx)
		if err != nil {
			t.Fatalf("recv: %v (got %d events)", err, len(got))
		}
		for _, r := range rs {
			got = append(got, r.Events...)
		}
	}
	want := []struct {
		rev int64
		typ kv.EventType
		key string
	}{{2, kv.EventPut, "a/1"}, {3, kv.EventPut, "a/1"}, {4, kv.EventPut, "a/2"}, {4, kv.EventDelete, "a/1"}}
	for i, w := range want {
		if got[i].KV.ModRevision != w.rev || got[i].Type != w.typ || string(got[i].KV.Key) != w.key {
			t.Fatalf("event %d = %+v, want %+v", i, got[i], w)
		}
	}
	if got[1].PrevKV == nil || string(got[1].PrevKV.Value) != "x" {
		t.Fatalf("prev kv of event 1 = %+v", got[1].PrevKV)
	}
}
