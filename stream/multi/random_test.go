package multi

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/internal/waittest"
	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/wire"
)

// streamTimeout bounds how long a test waits for a stream to deliver.
const streamTimeout = 10 * time.Second

// streamClient is a client of a stream of many watchers, driven by hand:
// it takes what the connection would write (takePending), receives a
// beginning of it (the rest is lost with the connection), and reconnects
// with the id of the last message received. It checks every watcher's
// messages as it receives them.
type streamClient struct {
	tb      testing.TB
	ms      *Stream
	c       *streamConn
	unread  []clientMessage // written, not yet received
	lastID  int64
	watches map[int64]*clientWatch
}

type clientMessage struct {
	id      int64
	event   string
	watchID int64
	rev     int64
	start   int64
	events  []string
	reason  string
}

type clientWatch struct {
	created bool
	start   int64
	last    int64 // the newest revision received
	events  []string
	final   string
}

// take hands what is pending to the connection, as its writer would.
func (c *streamClient) take() {
	c.tb.Helper()
	sb, _ := c.ms.takePending(c.c)
	if sb == nil {
		return
	}
	c.unread = append(c.unread, parseStreamMessages(c.tb, sb.out)...)
	c.ms.recycle(sb)
	c.ms.wrote(c.c)
}

// receive has the client receive the first n messages written.
func (c *streamClient) receive(n int) {
	c.tb.Helper()
	for _, m := range c.unread[:n] {
		if m.id <= c.lastID {
			c.tb.Fatalf("id %d after %d", m.id, c.lastID)
		}
		c.lastID = m.id
		w := c.watches[m.watchID]
		if w == nil {
			w = &clientWatch{}
			c.watches[m.watchID] = w
		}
		if w.final != "" || (!w.created) != (m.event == "created") {
			c.tb.Fatalf("watch %d: %s after created=%v final=%q", m.watchID, m.event, w.created, w.final)
		}
		switch m.event {
		case "created":
			w.created, w.start, w.last = true, m.start, m.start-1
		case "":
			if m.rev <= w.last {
				c.tb.Fatalf("watch %d: revision %d after %d", m.watchID, m.rev, w.last)
			}
			w.last = m.rev
			w.events = append(w.events, m.events...)
		case "compacted", "canceled":
			w.final = m.event + " " + m.reason
		}
	}
	c.unread = c.unread[n:]
}

// reconnect drops the connection, with what it wrote and the client did
// not receive, and opens another after the last message received.
func (c *streamClient) reconnect() {
	c.tb.Helper()
	c.ms.detach(c.c)
	c.unread = nil
	conn, err := c.ms.attach(c.lastID, true)
	if err != nil {
		c.tb.Fatalf("attach after %d: %v", c.lastID, err)
	}
	c.c = conn
}

// streamMessage holds the fields of every kind of message of a stream.
type streamMessage struct {
	Type            string              `json:"type"`
	WatchID         int64               `json:"watch_id"`
	Header          wire.ResponseHeader `json:"header"`
	StartRevision   int64               `json:"start_revision"`
	CompactRevision int64               `json:"compact_revision"`
	Reason          string              `json:"reason"`
	Events          []wire.WatchEvent   `json:"events"`
}

// parseStreamMessages parses what a stream wrote.
func parseStreamMessages(tb testing.TB, b []byte) []clientMessage {
	tb.Helper()
	var out []clientMessage
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	var m clientMessage
	for sc.Scan() {
		field, value, _ := strings.Cut(sc.Text(), ": ")
		switch field {
		case "id":
			m.id, _ = strconv.ParseInt(value, 10, 64)
		case "event":
			m.event = value
		case "data":
			// The data: only the fields of the kind of message it is
			// (httpapi's TestWatchStreamMessagesDeclared holds them to the
			// declared types of the API).
			what, data := "stream message "+value, []byte(value)
			d := wiretest.Decode[streamMessage](tb, "the stream", data)
			if d.Type != cmp.Or(m.event, "events") {
				tb.Fatalf("%s: type %q in a message of event %q", what, d.Type, m.event)
			}
			m.watchID = d.WatchID
			switch m.event {
			case "created":
				m.rev, m.start = d.Header.Revision, d.StartRevision
			case "canceled":
				m.reason = d.Reason
			case "":
				m.rev = d.Header.Revision
				for _, ev := range d.Events {
					m.events = append(m.events, fmt.Sprintf("%s %s=%s@%d", ev.Type, wiretest.Key(ev.KV), wiretest.Value(ev.KV), ev.KV.ModRevision))
				}
			default:
				m.rev = d.Header.Revision
			}
		case "":
			if m.id != 0 {
				out = append(out, m)
			}
			m = clientMessage{}
		}
	}
	return out
}

// expectedEvents is what a watch of r from start delivers up to end.
func expectedEvents(tb testing.TB, b *embedded.Backend, r keyrange.Range, start, end int64) []string {
	tb.Helper()
	var out []string
	req := kv.HistoryRequest{Key: r.Key, End: r.End, StartRevision: start, EndRevision: end, Limit: 10000}
	for {
		page, err := b.History(context.Background(), req)
		if err != nil {
			tb.Fatal(err)
		}
		for _, ev := range page.Events {
			value := string(ev.KV.Value)
			if ev.Type == kv.EventDelete {
				value = ""
			}
			out = append(out, fmt.Sprintf("%s %s=%s@%d", ev.Type, ev.KV.Key, value, ev.KV.ModRevision))
		}
		if !page.More {
			return out
		}
		req.Resume = page.Next
	}
}

// TestWatchStreamRandomResumes drives a stream through random writes,
// watchers added (from now or from the past) and canceled, and
// connections that lose a random part of what they were written before
// the client reconnects: at the end, every watcher has received exactly
// its history from its start, as the client saw it across all the
// connections, with nothing lost and nothing twice. With a buffer of 256
// bytes, watchers also wait for room and are parked (replayed from
// history) all the time.
func TestWatchStreamRandomResumes(t *testing.T) {
	for _, buffer := range []int64{0, 256} {
		var parks int64
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("buffer%d/seed%d", buffer, seed), func(t *testing.T) { parks += randomResumes(t, seed, buffer) })
		}
		// Whether one run parks depends on how the delivery and the
		// client's takes interleave; over the seeds, some must.
		if buffer > 0 && parks == 0 {
			t.Errorf("with a buffer of %d bytes no watcher was parked in any run", buffer)
		}
	}
}

// randomResumes runs one random schedule and returns how many times its
// watchers were parked.
func randomResumes(t *testing.T, seed uint64, buffer int64) int64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	b := storetest.Open(t, embedded.Options{})
	reg := New(Config{ResumeBytes: 1 << 30, BufferBytes: buffer}, b, nil, nil)
	defer reg.Close()
	ms, err := reg.Create(Owner{}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ms.attach(0, false)
	if err != nil {
		t.Fatal(err)
	}
	c := &streamClient{tb: t, ms: ms, c: conn, watches: map[int64]*clientWatch{}}
	ranges := map[int64]keyrange.Range{}
	var live []int64
	ctx := context.Background()
	for step := range 300 {
		switch op := rng.IntN(20); {
		case op < 8:
			key := fmt.Appendf(nil, "k/%d", rng.IntN(8))
			if rng.IntN(4) == 0 {
				_, err = b.Delete(ctx, kv.DeleteRequest{Key: key})
			} else {
				_, err = b.Put(ctx, kv.PutRequest{Key: key, Value: fmt.Appendf(nil, "v%d", step)}, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
		case op < 10:
			r := []keyrange.Range{keyrange.Prefix([]byte("k/")), keyrange.Single(fmt.Appendf(nil, "k/%d", rng.IntN(8))),
				keyrange.Between([]byte("k/3"), []byte("k/6"))}[rng.IntN(3)]
			var start int64
			if rng.IntN(2) == 0 {
				start = 1 + rng.Int64N(b.Rev())
			}
			id, err := ms.AddWatch(kv.WatchRequest{Key: r.Key, End: r.End, StartRevision: start})
			if err != nil {
				t.Fatal(err)
			}
			ranges[id] = r
			live = append(live, id)
		case op < 11 && len(live) > 0:
			i := rng.IntN(len(live))
			if err := ms.CancelWatch(live[i], "watch deleted"); err != nil {
				t.Fatal(err)
			}
			live = slices.Delete(live, i, i+1)
		case op < 16:
			time.Sleep(time.Millisecond) // let the collector take what is ready
			c.take()
		case op < 18:
			c.receive(rng.IntN(len(c.unread) + 1))
		default:
			c.reconnect()
		}
	}
	// Then everything, on one connection.
	end := b.Rev()
	want := map[int64][]string{}
	for id, r := range ranges {
		start := int64(0)
		if !waittest.For(streamTimeout, func() bool {
			c.take()
			c.receive(len(c.unread))
			w := c.watches[id]
			if w == nil || !w.created {
				return false
			}
			start = w.start
			want[id] = expectedEvents(t, b, r, start, end)
			return w.final != "" || len(w.events) >= len(want[id])
		}) {
			t.Fatalf("watch %d of %v: not caught up", id, r)
		}
	}
	for id, evs := range want {
		w := c.watches[id]
		if slices.Contains(live, id) {
			if w.final != "" || !slices.Equal(w.events, evs) {
				t.Errorf("watch %d from %d: %q, %q; want %q", id, w.start, w.events, w.final, evs)
			}
			continue
		}
		if w.final != "canceled watch deleted" || len(w.events) > len(evs) || !slices.Equal(w.events, evs[:len(w.events)]) {
			t.Errorf("canceled watch %d from %d: %q, %q; want a beginning of %q", id, w.start, w.events, w.final, evs)
		}
	}
	return reg.Parks()
}
