package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// decodeDeclared decodes what a hand-written appender (or a handler) wrote
// into the declared wire type T, refusing fields T does not declare, and
// checks that T encodes back to the same JSON: the writer neither adds a
// field the document does not have nor drops one it promises. It returns
// the decoded value.
func decodeDeclared[T any](t testing.TB, name string, out []byte) T {
	t.Helper()
	v := wiretest.Decode[T](t, name, out)
	back, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%T) = %v", v, err)
	}
	var a, b any
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("%s wrote invalid JSON %s: %v", name, out, err)
	}
	_ = json.Unmarshal(back, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s wrote %s; as %T it reads %s", name, out, v, back)
	}
	return v
}

// TestAppendersMatchDeclaredTypes holds every hand-written appender of a
// hot path to the declared type swag documents.
func TestAppendersMatchDeclaredTypes(t *testing.T) {
	text := kv.KeyValue{Key: []byte("k"), Value: []byte("v"), CreateRevision: 2, ModRevision: 3, Version: 2, Lease: 7}
	binary := kv.KeyValue{Key: []byte{0xff}, Value: []byte{0, 0xfe}, CreateRevision: 4, ModRevision: 4, Version: 1}
	decodeDeclared[wire.KeyValue](t, "appendKV(text)", wire.AppendKV(nil, &text, true))
	decodeDeclared[wire.KeyValue](t, "appendKV(binary)", wire.AppendKV(nil, &binary, true))
	decodeDeclared[wire.KeyValue](t, "appendKV(keys only)", wire.AppendKV(nil, &text, false))
	decodeDeclared[wire.WatchEvent](t, "wire.AppendEvent(put)", wire.AppendEvent(nil, &kv.Event{Type: kv.EventPut, KV: text, PrevKV: &binary}))
	decodeDeclared[wire.WatchEvent](t, "wire.AppendEvent(delete)", wire.AppendEvent(nil, &kv.Event{Type: kv.EventDelete, KV: binary}))
	del := kv.DeleteResult{Revision: 9, Deleted: 2, PrevKVs: []kv.KeyValue{text, binary}}
	decodeDeclared[wire.DeleteResponse](t, "appendDeleteResult(prev_kv)", appendDeleteResult(nil, &del, true))
	decodeDeclared[wire.DeleteResponse](t, "appendDeleteResult", appendDeleteResult(nil, &del, false))

	req := kv.TxnRequest{Success: []kv.Op{
		{Put: &kv.PutRequest{Key: []byte("a"), PrevKV: true}},
		{Delete: &kv.DeleteRequest{Key: []byte("b"), PrevKV: true}},
		{Range: &kv.RangeOp{Key: []byte("c"), Options: kv.RangeOptions{KeysOnly: true}}},
		{Txn: &kv.TxnRequest{}},
	}}
	res := kv.TxnResult{Revision: 10, Succeeded: true, Responses: []kv.OpResult{
		{Put: &kv.PutResult{Revision: 10, PrevKV: &text}},
		{Delete: &kv.DeleteResult{Revision: 10, Deleted: 1, PrevKVs: []kv.KeyValue{binary}}},
		{Range: &kv.RangeResult{Revision: 10, KVs: []kv.KeyValue{text}, Count: 3, More: true}},
		{Txn: &kv.TxnResult{Revision: 10, Responses: []kv.OpResult{}}},
	}}
	decodeDeclared[wire.TxnResponse](t, "appendTxnResult", appendTxnResult(nil, &res, &req))
}
