package mvcc

import (
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// BenchmarkHistoryPage reads one page of history from a store of 200,000
// revisions spread over 1,000 keys, plus one key written only at the
// start and at the end:
//
//   - prefix-dense: 1,000 events of a prefix holding a tenth of the writes;
//   - range-sparse: a range holding only the sparse key, so the page stops
//     after DefaultHistoryMaxScan records with at most one event;
//   - key-sparse: that key alone, answered from the index: both events in
//     one page whatever lies between them.
//
// The ratio range-sparse / key-sparse is what the index buys a key's
// history; range-sparse is the most one page can cost.
func BenchmarkHistoryPage(b *testing.B) {
	s := benchOpen(b, Options{NoFsync: true})
	value := make([]byte, benchValueLen)
	put := func(key []byte) {
		if _, err := s.Put(kv.PutRequest{Key: key, Value: value}); err != nil {
			b.Fatal(err)
		}
	}
	put([]byte("sparse"))
	for i := range uint64(200_000) {
		family := "cold"
		if i%10 == 0 {
			family = "hot"
		}
		put(benchKey(family, i%1000))
	}
	put([]byte("sparse"))
	cases := []struct {
		name string
		q    kv.HistoryRequest
	}{
		{"prefix-dense", kv.HistoryRequest{Key: []byte("hot/"), End: []byte("hot0"), Limit: 1000}},
		{"range-sparse", kv.HistoryRequest{Key: []byte("sparse"), End: []byte("sparse0")}},
		{"key-sparse", kv.HistoryRequest{Key: []byte("sparse")}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			events := 0
			for b.Loop() {
				page, err := s.HistoryPage(c.q)
				if err != nil {
					b.Fatal(err)
				}
				events += len(page.Events)
			}
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}
