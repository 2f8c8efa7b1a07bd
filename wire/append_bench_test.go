package wire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// BenchmarkAppendKVs encodes the answer of a 1,000-key list, as ListPage
// does: keys like a configuration tree's, values of 100 bytes.
func BenchmarkAppendKVs(b *testing.B) {
	kvs := make([]kv.KeyValue, 1000)
	value := []byte(strings.Repeat("v", 100))
	for i := range kvs {
		kvs[i] = kv.KeyValue{Key: fmt.Appendf(nil, "services/app/config/%06d", i), Value: value,
			CreateRevision: int64(i + 1), ModRevision: int64(i + 1000), Version: 3}
	}
	b.ReportAllocs()
	for b.Loop() {
		out := AppendHeader(nil, 12345)
		out = AppendKVs(out, "kvs", kvs, true)
		b.SetBytes(int64(len(out)))
	}
}
