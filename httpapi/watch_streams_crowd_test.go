package httpapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/internal/waittest"
	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/stream"
	"github.com/httpkv/httpkv/stream/multi"

	"github.com/httpkv/httpkv/wire"
)

// The attack on streams of many watchers: many streams whose readers stop
// reading, with a small receive buffer, and puts of values of control
// bytes, which JSON escapes in six (0x01 is \u0001).

// crowdValue is the value of the crowd tests' puts: 64 KiB of 0x01,
// 384 KiB once encoded.
var crowdValue = strings.Repeat("\x01", 64<<10)

// streamCrowd is a server and streams of many watchers on it, each read
// by a raw connection that stops reading once it has sent its request.
type streamCrowd struct {
	h     *Handler
	b     *embedded.Backend
	srv   *httptest.Server
	ids   []string
	conns []net.Conn
	// reconnects counts the readers that resumed after the server cut
	// their connection.
	reconnects int
}

func newStreamCrowd(tb testing.TB, cfg multi.Config) *streamCrowd {
	tb.Helper()
	c := &streamCrowd{}
	c.h, c.b = newTestHandler(tb, Config{KeepAliveInterval: time.Hour, WatchStreams: cfg})
	c.srv = httptest.NewUnstartedServer(c.h)
	// Small send buffers, so that what a stalled reader does not take
	// stays in the server's memory rather than in the kernel's.
	c.srv.Listener = smallSendBuffers{c.srv.Listener.(*net.TCPListener)}
	c.srv.Start()
	tb.Cleanup(func() {
		for _, conn := range c.conns {
			conn.Close()
		}
		c.srv.Close()
		c.h.Close()
	})
	return c
}

// open creates a stream with the given watches and a stalled reader.
func (c *streamCrowd) open(tb testing.TB, watches ...string) {
	tb.Helper()
	rec := mustServe(tb, c.h, http.StatusCreated, "POST", "/v1/watch/streams", `{"watches":[`+strings.Join(watches, ",")+`]}`)
	var created watchStreamCreatedDoc
	decodeJSONBody(tb, rec.Body.Bytes(), &created)
	// A receive buffer of 4 KiB, set before the connection is made, so
	// that the window it announces is that small from the start.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	conn, err := d.Dial("tcp", c.srv.Listener.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /v1/watch/streams/%s HTTP/1.1\r\nHost: x\r\n\r\n", created.Stream)
	c.ids = append(c.ids, created.Stream)
	c.conns = append(c.conns, conn)
}

// settle waits until the streams have taken or parked every watcher of
// what was written: the store holds nothing queued for them, and none
// waits for room; it returns the most the streams counted against
// TotalBufferBytes meanwhile.
func (c *streamCrowd) settle(tb testing.TB) int64 {
	tb.Helper()
	reg := c.h.wstreams
	var most int64
	ok := waittest.For(3*streamTimeout, func() bool {
		most = max(most, reg.Buffered())
		if st := c.b.Stats().Watchers; st.PendingEvents != 0 || st.Unsynced != 0 || st.Victims != 0 {
			return false
		}
		for _, id := range c.ids {
			if reg.Get(id).Stats().Deferred > 0 {
				return false
			}
		}
		return true
	})
	if !ok {
		tb.Fatalf("the streams neither took nor parked their watchers within %v: %+v", 3*streamTimeout, c.b.Stats().Watchers)
	}
	return max(most, reg.Buffered())
}

// read resumes reading stream i and returns the value of each of the
// first n messages of events it carries, by watch. When the server cuts
// the connection (evict), it reconnects with the id of the last message
// it received, as a browser does, and reads on.
func (c *streamCrowd) read(tb testing.TB, i, n int) map[int64][]string {
	tb.Helper()
	conn := c.conns[i]
	lastID := ""
	got := make(map[int64][]string)
	deadline := time.After(3 * streamTimeout)
	for n > 0 {
		_ = conn.SetReadDeadline(time.Now().Add(3 * streamTimeout))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			tb.Fatalf("stream %d: %v, %v", i, resp, err)
		}
		sse := newSSEReader(resp.Body)
	read:
		for n > 0 {
			var m sseMessage
			select {
			case m = <-sse.msgs:
			case <-sse.done:
				select {
				case m = <-sse.msgs:
				default:
					break read // cut: reconnect
				}
			case <-deadline:
				tb.Fatalf("stream %d: %d messages of events still awaited after %v", i, n, 3*streamTimeout)
			}
			if m.Data == "" {
				continue
			}
			lastID = m.ID
			var msg struct {
				Type    string `json:"type"`
				WatchID int64  `json:"watch_id"`
				Events  []struct {
					KV wire.KeyValue `json:"kv"`
				} `json:"events"`
			}
			if err := json.Unmarshal([]byte(m.Data), &msg); err != nil {
				tb.Fatalf("stream %d: %v in %.200s", i, err, m.Data)
			}
			if msg.Type == "events" {
				for _, ev := range msg.Events {
					got[msg.WatchID] = append(got[msg.WatchID], wiretest.Value(ev.KV))
				}
				n--
			}
		}
		conn.Close()
		if n == 0 {
			break
		}
		c.reconnects++
		if conn, err = net.Dial("tcp", c.srv.Listener.Addr().String()); err != nil {
			tb.Fatal(err)
		}
		c.conns[i] = conn
		fmt.Fprintf(conn, "GET /v1/watch/streams/%s HTTP/1.1\r\nHost: x\r\nLast-Event-ID: %s\r\n\r\n", c.ids[i], lastID)
	}
	return got
}

// TestWatchStreamsShareLargeEvents: 32 streams of 4 watchers of one key,
// their readers stalled, and two puts of 64 KiB of 0x01 (384 KiB as
// JSON). The streams refer to one encoding of each revision's events
// instead of each copying it (before, each stream held its own copy in
// its buffer, another in its cache of encoded events and a third in its
// scratch space: a user's 32 stalled streams held 1.06 GB for a put of
// 1.4 MB); the heap and what the streams count against their bound grow
// by about those two encodings. Once the readers read, each watcher gets
// both values whole.
func TestWatchStreamsShareLargeEvents(t *testing.T) {
	const (
		streams  = 32
		watchers = 4
		puts     = 2
	)
	c := newStreamCrowd(t, multi.Config{MaxStreamsPerUser: streams})
	watch := strings.TrimSuffix(strings.Repeat(`{"key":"k"},`, watchers), ",")
	for range streams {
		c.open(t, watch)
	}
	// The created messages are written: what is left is the puts'.
	c.settle(t)
	before := storetest.HeapInUse()
	for range puts {
		mustServe(t, c.h, http.StatusOK, "PUT", "/v1/kv/k", crowdValue)
	}
	most := c.settle(t)
	grown := int64(storetest.HeapInUse()) - int64(before)
	encoded := int64(6 * len(crowdValue))
	t.Logf("%d stalled streams of %d watchers, %d puts of %d bytes (%d as JSON): the streams counted at most %d bytes, the heap grew %d bytes",
		streams, watchers, puts, len(crowdValue), encoded, most, grown)
	if limit := puts*encoded + streams*stream.MaxPooledBuffer; most > limit {
		t.Fatalf("the streams counted %d bytes against their bound, want at most one encoding of each put and a buffer each (%d)", most, limit)
	}
	if limit := puts*(encoded+int64(len(crowdValue))) + 16<<20; grown > limit {
		t.Fatalf("the heap grew %d bytes, want at most one encoding and one copy of each put and 16 MiB (%d)", grown, limit)
	}
	for i := range 2 {
		got := c.read(t, i, watchers*puts)
		for id := int64(1); id <= watchers; id++ {
			if vs := got[id]; len(vs) != puts || vs[0] != crowdValue || vs[1] != crowdValue {
				t.Fatalf("stream %d, watch %d: got %d values, want %d of %d bytes of 0x01", i, id, len(vs), puts, len(crowdValue))
			}
		}
	}
}

// TestWatchStreamsTotalHoldsForACrowd: 16 streams, each watching a key of
// its own, their readers stalled, and a put of 64 KiB of 0x01 to each
// key: distinct events, nothing to share. The streams hold no more than
// TotalBufferBytes together, counted as encoded (before, each stream,
// holding nothing, took one revision past it, counted raw); the watchers
// that found no room are parked, and once the readers read, each gets
// its value, caught up from history.
func TestWatchStreamsTotalHoldsForACrowd(t *testing.T) {
	const (
		streams = 16
		total   = 1 << 20
	)
	// A stream let go of waits for its reader without a connection: an
	// idle timeout of an hour keeps it however slow a loaded machine
	// makes the test (the default minute dropped one, which then
	// answered 404).
	c := newStreamCrowd(t, multi.Config{MaxStreamsPerUser: streams, TotalBufferBytes: total, IdleTimeout: time.Hour})
	for i := range streams {
		c.open(t, fmt.Sprintf(`{"key":"k/%02d"}`, i))
	}
	c.settle(t)
	before := storetest.HeapInUse()
	for i := range streams {
		mustServe(t, c.h, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/k/%02d", i), crowdValue)
	}
	most := c.settle(t)
	grown := int64(storetest.HeapInUse()) - int64(before)
	t.Logf("%d stalled streams, a put of %d bytes of 0x01 each (%d as JSON): the streams counted at most %d bytes (bound %d), the heap grew %d bytes; %d takes refused",
		streams, len(crowdValue), 6*len(crowdValue), most, total, grown, c.h.wstreams.Refused())
	defer func() {
		t.Logf("%d streams let go of what they held, %d readers reconnected", c.h.wstreams.Evictions(), c.reconnects)
	}()
	if most > total {
		t.Fatalf("the streams counted %d bytes against their bound %d", most, total)
	}
	if limit := int64(total + streams*len(crowdValue) + 16<<20); grown > limit {
		t.Fatalf("the heap grew %d bytes, want at most the bound, the values and 16 MiB (%d)", grown, limit)
	}
	// The readers of streams that hold nothing read first: what the
	// others hold, stalled, is let go of to make room for them, and their
	// readers resume.
	var holding, empty []int
	for i, id := range c.ids {
		if c.h.wstreams.Get(id).Stats().Holding {
			holding = append(holding, i)
		} else {
			empty = append(empty, i)
		}
	}
	for _, i := range append(empty, holding...) {
		if got := c.read(t, i, 1); len(got[1]) != 1 || got[1][0] != crowdValue {
			t.Fatalf("stream %d: got %d values, want its put", i, len(got[1]))
		}
	}
	if len(holding) > 0 && c.h.wstreams.Evictions() == 0 {
		t.Fatalf("%d stalled streams held what others needed room for, and were not let go of", len(holding))
	}
}

// smallSendBuffers gives each connection it accepts a send buffer of
// 16 KiB.
type smallSendBuffers struct{ *net.TCPListener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.AcceptTCP()
	if err != nil {
		return nil, err
	}
	_ = c.SetWriteBuffer(16 << 10)
	return c, nil
}
