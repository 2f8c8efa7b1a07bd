package httpapi

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/kv"
)

// TestWatchStreamsTotalBuffer: streams whose readers stop taking hold,
// together, no more than TotalBufferBytes and one take each (a stream
// holding nothing always takes), however far each is within its own
// BufferBytes; their watchers wait, are parked once the readers have
// stalled, and get every revision, in order, once they take again; and
// nothing is counted once the streams are gone.
func TestWatchStreamsTotalBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			streams = 4
			puts    = 50
			value   = 4 << 10
		)
		b := openTestBackend(t, embedded.Options{})
		reg := newStreamRegistry(WatchStreamConfig{BufferBytes: 1 << 20, TotalBufferBytes: 1}, b, allowAll{})
		defer reg.close()
		mss := make([]*multiStream, streams)
		conns := make([]*streamConn, streams)
		for i := range mss {
			ms, err := reg.create(streamOwner{}, fmt.Sprint("test", i), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ms.addWatch(kv.WatchRequest{Key: []byte("t/"), End: []byte("t0")}); err != nil {
				t.Fatal(err)
			}
			if conns[i], err = ms.attach(0, false); err != nil {
				t.Fatal(err)
			}
			mss[i] = ms
		}
		got := make([]string, streams) // the revisions each reader took
		take := func(i int) {
			sb, _ := mss[i].takePending(conns[i])
			if sb != nil {
				for _, line := range strings.Split(string(sb.out), "\n") {
					if !strings.HasPrefix(line, `data: {"type":"events"`) {
						continue
					}
					if _, rev, ok := strings.Cut(line, `"header":{"revision":`); ok {
						got[i] += rev[:strings.IndexByte(rev, '}')] + " "
					}
				}
				mss[i].recycle(sb)
			}
			mss[i].wrote(conns[i])
		}
		for i := range mss {
			take(i) // the created messages
		}
		synctest.Wait()
		v := []byte(strings.Repeat("v", value))
		var want string
		for i := range puts {
			res, err := b.Put(context.Background(), kv.PutRequest{Key: fmt.Appendf(nil, "t/%d", i), Value: v}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want += fmt.Sprint(res.Revision) + " "
			synctest.Wait()
		}
		// Each stream took one revision, holding nothing then; the rest
		// waits.
		if n := reg.buffered.Load(); n > streams*maxPooledStreamBuffer {
			t.Fatalf("the streams' buffers hold %d bytes, want at most one pooled buffer each (%d)", n, streams*maxPooledStreamBuffer)
		}
		for i, ms := range mss {
			ms.mu.Lock()
			p := ms.pendingBytes()
			ms.mu.Unlock()
			if p > 2*value {
				t.Fatalf("stream %d holds %d bytes pending, want one revision (about %d): the bound for all streams was passed", i, p, value)
			}
		}
		time.Sleep(stallAfter)
		synctest.Wait()
		// The readers take again: every revision, once, in order.
		for range 200 {
			for i := range mss {
				take(i)
			}
			synctest.Wait()
		}
		for i := range mss {
			if got[i] != want {
				t.Fatalf("stream %d took revisions %s, want %s", i, got[i], want)
			}
		}
		reg.close()
		if n := reg.buffered.Load(); n != 0 {
			t.Fatalf("the registry counts %d bytes of buffers after every stream is gone, want 0", n)
		}
	})
}
