package multi

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/kv"
)

// TestWatchStreamsTotalBuffer: streams whose readers stop taking hold,
// together, no more than TotalBufferBytes, however far each is within its
// own BufferBytes, and even those holding nothing take nothing past it;
// their watchers wait, are parked once the readers have stalled (a
// stalled reader holding what others need room for is cut, and resumes
// after the last message it took), and get every revision, in order,
// once they take again; and nothing is counted once the streams are gone.
func TestWatchStreamsTotalBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			streams = 4
			puts    = 50
			value   = 4 << 10
		)
		b := storetest.Open(t, embedded.Options{})
		const total = 3 * value
		reg := New(Config{BufferBytes: 1 << 20, TotalBufferBytes: total}, b, nil, nil)
		defer reg.Close()
		mss := make([]*Stream, streams)
		conns := make([]*streamConn, streams)
		for i := range mss {
			ms, err := reg.Create(Owner{}, fmt.Sprint("test", i), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ms.AddWatch(kv.WatchRequest{Key: []byte("t/"), End: []byte("t0")}); err != nil {
				t.Fatal(err)
			}
			if conns[i], err = ms.attach(0, false); err != nil {
				t.Fatal(err)
			}
			mss[i] = ms
		}
		got := make([]string, streams) // the revisions each reader took
		last := make([]int64, streams) // the id of the last message each took
		take := func(i int) {
			select {
			case <-conns[i].kicked:
				// Cut while it stalled and others needed room: it
				// resumes after the last message it took, as a client
				// reconnecting with Last-Event-ID does.
				c, err := mss[i].attach(last[i], true)
				if err != nil {
					t.Fatal(err)
				}
				conns[i] = c
			default:
			}
			sb, _ := mss[i].takePending(conns[i])
			if sb != nil {
				for _, line := range strings.Split(string(sb.out), "\n") {
					if id, ok := strings.CutPrefix(line, "id: "); ok {
						last[i], _ = strconv.ParseInt(id, 10, 64)
					}
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
		// The streams took what the bound for all of them allows; the
		// rest waits.
		var held int64
		for _, ms := range mss {
			ms.mu.Lock()
			held += ms.pendingBytes()
			ms.mu.Unlock()
		}
		if n := reg.buffered.Load(); n > total || held > total || held == 0 {
			t.Fatalf("the streams hold %d bytes pending and count %d, want at most the bound for all of them, %d (and something)", held, n, total)
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
		reg.Close()
		if n := reg.buffered.Load(); n != 0 {
			t.Fatalf("the registry counts %d bytes of buffers after every stream is gone, want 0", n)
		}
	})
}
