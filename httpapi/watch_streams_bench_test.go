package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/stream/multi"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/kv"
)

// BenchmarkWatchStreamFanout: watchers of one prefix on one stream, each
// put going out to every one of them, read by one client; it reports the
// events delivered per second. b.N is the puts.
func BenchmarkWatchStreamFanout(b *testing.B) {
	for _, watchers := range []int{1000, 10000} {
		b.Run(fmt.Sprint(watchers), func(b *testing.B) { benchmarkFanout(b, watchers) })
	}
}

func benchmarkFanout(b *testing.B, watchers int) {
	be := storetest.Open(b, embedded.Options{})
	h := NewHandler(be, nil, zerolog.Nop(), Config{KeepAliveInterval: time.Hour,
		WatchStreams: multi.Config{MaxWatchers: watchers}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	var body strings.Builder
	body.WriteString(`{"watches":[`)
	for i := range watchers {
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteString(`{"key":"fan/","prefix":true}`)
	}
	body.WriteString(`]}`)
	rec := mustServe(b, h, http.StatusCreated, "POST", "/v1/watch/streams", body.String())
	var created watchStreamCreatedDoc
	decodeJSONBody(b, rec.Body.Bytes(), &created)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/watch/streams/"+created.Stream, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()

	var mu sync.Mutex
	events := 0
	cond := sync.NewCond(&mu)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		prefix := []byte(`data: {"type":"events"`)
		for sc.Scan() {
			if bytes.HasPrefix(sc.Bytes(), prefix) {
				mu.Lock()
				events++
				cond.Broadcast()
				mu.Unlock()
			}
		}
	}()
	value := bytes.Repeat([]byte("v"), 128)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if _, err := be.Put(context.Background(), kv.PutRequest{Key: fmt.Appendf(nil, "fan/%d", i%100), Value: value}, nil); err != nil {
			b.Fatal(err)
		}
	}
	mu.Lock()
	for events < b.N*watchers {
		cond.Wait()
	}
	mu.Unlock()
	b.StopTimer()
	b.ReportMetric(float64(b.N*watchers)/time.Since(start).Seconds(), "events/s")
	b.ReportMetric(float64(h.wstreams.Parks())/float64(b.N), "parks/put")
}
