package tests

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestWatchEvents opens watches of several shapes, then writes, and checks
// what each receives: one message per revision holding every matching
// event of it, in order, with prev_kv when asked.
func TestWatchEvents(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// Revision 2 on a fresh store, before the watches; a gateway's
	// cluster may have taken revisions before (its deployment's marker):
	// the revisions below are counted from this one (shift).
	cur := s.Put(t, "w/a", "0")
	off := cur - 2

	watches := []struct {
		name  string
		query string
		want  []string // one line per message: its events, "|"-separated
	}{
		{"prefix", "key=w/&prefix=true", []string{
			"put w/a=1 @3",
			"put w/b=2 @4",
			"put w/a=3 @5|put w/c=4 @5|delete w/b @5",
			"delete w/a @6|delete w/c @6",
			"put w/\xff=5 @7",
		}},
		{"key", "key=w/a", []string{"put w/a=1 @3", "put w/a=3 @5", "delete w/a @6"}},
		{"range_end", "key=w/b&range_end=w/d", []string{"put w/b=2 @4", "put w/c=4 @5|delete w/b @5", "delete w/c @6"}},
		{"from_key", "key=w/c&from_key=true", []string{"put w/c=4 @5", "delete w/c @6", "put w/\xff=5 @7", "put x=6 @8"}},
		{"every key", "prefix=true", []string{
			"put w/a=1 @3",
			"put w/b=2 @4",
			"put w/a=3 @5|put w/c=4 @5|delete w/b @5",
			"delete w/a @6|delete w/c @6",
			"put w/\xff=5 @7",
			"put x=6 @8",
		}},
		{"noput", "key=w/&prefix=true&filters=noput", []string{"delete w/b @5", "delete w/a @6|delete w/c @6"}},
		{"nodelete", "key=w/&prefix=true&filters=nodelete", []string{"put w/a=1 @3", "put w/b=2 @4", "put w/a=3 @5|put w/c=4 @5", "put w/\xff=5 @7"}},
		{"from the past", "key=w/a&start_revision=2", []string{"put w/a=0 @2", "put w/a=1 @3", "put w/a=3 @5", "delete w/a @6"}},
		{"binary key", "key_base64=dy%2F%2F", []string{"put w/\xff=5 @7"}},
	}
	streams := make([]*e2e.WatchStream, len(watches))
	for i, wt := range watches {
		watches[i].want = shiftRevisions(wt.want, off)
		if wt.name == "from the past" {
			wt.query = fmt.Sprintf("key=w/a&start_revision=%d", cur)
		}
		streams[i] = e2e.OpenWatch(t, s, wt.query)
		st := streams[i].Created.StartRevision
		if wt.name != "from the past" && (st != cur+1 || streams[i].Created.Header.Revision != cur) {
			t.Errorf("%s: created %v, want start_revision %d at revision %d", streams[i].Req, streams[i].Created.Raw, cur+1, cur)
		}
	}

	s.Put(t, "w/a", "1")                                                                                                                // 3
	s.Put(t, "w/b", "2")                                                                                                                // 4
	s.Txn(t, `{"success":[{"put":{"key":"w/a","value":"3"}},{"put":{"key":"w/c","value":"4"}},{"delete":{"key":"w/b"}}]}`).Want(t, 200) // 5
	s.Do(t, "DELETE", "/v1/kv?key=w/&prefix=true", nil).Want(t, 200)                                                                    // 6
	s.Do(t, "PUT", "/v1/kv/w%2F%FF", []byte("5")).Want(t, 200)                                                                          // 7
	s.Put(t, "x", "6")                                                                                                                  // 8
	s.Do(t, "DELETE", "/v1/kv/nothing", nil).Want(t, 200)                                                                               // no revision
	// Revisions 9 and 10 reach every watch, so that a watch that has read
	// up to one of them has read everything before.
	s.Txn(t, `{"success":[{"put":{"key":"w/a","value":"e"}},{"put":{"key":"w/c","value":"e"}},{"put":{"key_base64":"dy//","value":"e"}},{"put":{"key":"x","value":"e"}}]}`).Want(t, 200)
	s.Do(t, "DELETE", "/v1/kv?key=w/&prefix=true", nil).Want(t, 200)
	s.Do(t, "DELETE", "/v1/kv?key=x", nil).Want(t, 200)

	for i, wt := range watches {
		t.Run(wt.name, func(t *testing.T) {
			w := streams[i]
			var got []string
			for {
				m := w.NextData(e2e.WatchTimeout)
				if m.ID >= 9+off {
					break
				}
				var evs []string
				for _, ev := range m.Events {
					evs = append(evs, eventLine(ev))
				}
				got = append(got, strings.Join(evs, "|"))
			}
			if !slices.Equal(got, wt.want) {
				t.Errorf("%s received\n\t%s\nwant\n\t%s", w.Req, strings.Join(got, "\n\t"), strings.Join(wt.want, "\n\t"))
			}
		})
	}

	t.Run("prev_kv", func(t *testing.T) {
		w := e2e.OpenWatch(t, s, "key=pk&prev_kv=true")
		s.Put(t, "pk", "a")
		s.Put(t, "pk", "b")
		s.Do(t, "DELETE", "/v1/kv/pk", nil).Want(t, 200)
		var got []string
		for range 3 {
			m := w.NextData(e2e.WatchTimeout)
			got = append(got, e2e.EventString(&m.Events[0]))
		}
		rev := w.Created.StartRevision
		want := []string{
			fmt.Sprintf(`put {"pk"="a" create=%d mod=%d version=1 lease=0}`, rev, rev),
			fmt.Sprintf(`put {"pk"="b" create=%d mod=%d version=2 lease=0} prev {"pk"="a" create=%d mod=%d version=1 lease=0}`, rev, rev+1, rev, rev),
			fmt.Sprintf(`delete {"pk"="" create=0 mod=%d version=0 lease=0} prev {"pk"="b" create=%d mod=%d version=2 lease=0}`, rev+2, rev, rev+1),
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s received\n\t%s\nwant\n\t%s", w.Req, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
	})
}

// TestWatchLargeRevisions: a revision is one message however many events
// it holds, whether the watcher is caught up or catching up from history.
func TestWatchLargeRevisions(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	const perTxn, txns = 100, 4
	synced := e2e.OpenWatch(t, s, "key=big/&prefix=true")
	var revs []int64
	for i := range txns {
		ops := make([]string, perTxn)
		for j := range ops {
			ops[j] = fmt.Sprintf(`{"put":{"key":"big/%d/%03d","value":"v"}}`, i, j)
		}
		revs = append(revs, s.Txn(t, `{"success":[`+strings.Join(ops, ",")+`]}`).Want(t, http.StatusOK).Revision(t))
	}
	var del client.DeleteResponse
	s.Do(t, "DELETE", "/v1/kv?key=big/&prefix=true", nil).Ok(t, http.StatusOK, &del)
	revs = append(revs, del.Header.Revision)

	catchingUp := e2e.OpenWatch(t, s, "key=big/&prefix=true&start_revision=1")
	for _, w := range []*e2e.WatchStream{synced, catchingUp} {
		for i, rev := range revs {
			m := w.NextData(e2e.WatchTimeout)
			n := perTxn
			if i == txns {
				n = perTxn * txns
			}
			if m.ID != rev || len(m.Events) != n {
				t.Errorf("%s: message %d of revision %d with %d events, want revision %d with %d", w.Req, i, m.ID, len(m.Events), rev, n)
			}
		}
	}
}

// TestWatchSlowReader: watchers whose clients stop reading fall behind
// the writes without holding them up; once read again, one receives every
// revision, in order, and one whose history was compacted meanwhile is
// told so in-band.
func TestWatchSlowReader(t *testing.T) {
	t.Parallel()
	// The watchers stall until the writes have put them behind, and one
	// while the other is read: longer than 30 s on a loaded machine.
	s := e2e.StartServer(t, fmt.Sprintf("--write-timeout=%v", e2e.StalledWriteTimeout))
	// A small receive buffer makes the server's side fill up sooner.
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return cmp.Or(err, serr)
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	defer client.CloseIdleConnections()
	slow := e2e.OpenWatchWith(t, client, s, "key=slow/&prefix=true")
	compacted := e2e.OpenWatchWith(t, client, s, "key=slow/&prefix=true")
	t.Cleanup(func() {
		if t.Failed() {
			// Where the watchers stand, to tell a stalled catch-up from a
			// slow one.
			r := s.Do(t, "GET", "/metrics", nil)
			var lines []string
			for line := range strings.Lines(string(r.Body)) {
				if strings.HasPrefix(line, "httpkv_watch") {
					lines = append(lines, line)
				}
			}
			t.Logf("watchers: %+v\n%s", s.Status(t).Watchers, strings.Join(lines, ""))
		}
	})

	const perTxn = 128
	ops := make([]string, perTxn)
	for j := range ops {
		ops[j] = fmt.Sprintf(`{"put":{"key":"slow/%03d","value":"v"}}`, j)
	}
	doc := `{"success":[` + strings.Join(ops, ",") + `]}`
	// Write until both watchers are behind: the bytes written exceed what
	// the connections hold and the events what the watchers' queues hold.
	var revs []int64
	for behind := false; !behind; {
		if len(revs) == 2000 {
			t.Fatalf("%d txns of %d puts and the watchers are still caught up: %+v", len(revs), perTxn, s.Status(t).Watchers)
		}
		for range 10 {
			revs = append(revs, s.Txn(t, doc).Want(t, http.StatusOK).Revision(t))
		}
		st := s.Status(t)
		behind = st.Watchers.Unsynced+st.Watchers.Victims == 2
	}
	for _, rev := range revs {
		m := slow.NextData(e2e.WatchTimeout)
		if m.ID != rev || len(m.Events) != perTxn {
			t.Fatalf("%s: revision %d with %d events, want %d with %d", slow.Req, m.ID, len(m.Events), rev, perTxn)
		}
	}
	// While slow was read, the other may have caught up into the kernel's
	// buffers, which grow on a loaded machine. Put it behind again, with
	// two revisions to spare past the one it holds, so the compaction
	// lands inside what it has yet to catch up on.
	slow.Close()
	e2e.Eventually(t, e2e.WatchTimeout, func() (bool, string) {
		w := s.Status(t).Watchers
		return w.Synced+w.Unsynced+w.Victims == 1, fmt.Sprintf("%s closed, watchers %+v", slow.Req, w)
	})
	for behind := false; !behind; {
		if len(revs) == 4000 {
			t.Fatalf("%d txns of %d puts and the watcher is still caught up: %+v", len(revs), perTxn, s.Status(t).Watchers)
		}
		revs = append(revs, s.Txn(t, doc).Want(t, http.StatusOK).Revision(t))
		w := s.Status(t).Watchers
		behind = w.Unsynced+w.Victims == 1
	}
	for range 2 {
		revs = append(revs, s.Txn(t, doc).Want(t, http.StatusOK).Revision(t))
	}
	last := revs[len(revs)-1]
	s.Do(t, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d}`, last))).Want(t, http.StatusOK)
	n := 0
	for {
		m := compacted.Next(e2e.WatchTimeout)
		if m.Kind == "compacted" {
			if m.CompactRevision != last {
				t.Errorf("%s: compacted at %d, want %d", compacted.Req, m.CompactRevision, last)
			}
			break
		}
		if m.Kind != "message" || n == len(revs) || m.ID != revs[n] {
			t.Fatalf("%s: %v, want the next written revision or compacted", compacted.Req, m.Raw)
		}
		n++
	}
	compacted.WantEnd(e2e.WatchTimeout)
	if n == len(revs) {
		t.Errorf("%s received every revision before compacted, want it cut short", compacted.Req)
	}
	t.Logf("%d txns of %d puts; the compacted watcher received %d revisions first", len(revs), perTxn, n)
}

// TestWatchLeaseRevoke: revoking a lease deletes its keys in one
// revision, which a watcher receives as one message.
func TestWatchLeaseRevoke(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600,"id":9}`)).Want(t, http.StatusCreated)
	for _, k := range []string{"lr/a", "lr/b", "lr/c"} {
		s.Do(t, "PUT", e2e.KeyPath(k)+"?lease=9", []byte("v")).Want(t, http.StatusOK)
	}
	s.Put(t, "lr/d", "not leased")
	w := e2e.OpenWatch(t, s, "key=lr/&prefix=true&prev_kv=true")
	rev := s.Do(t, "DELETE", "/v1/leases/9", nil).Want(t, http.StatusOK).Revision(t)
	m := w.NextData(e2e.WatchTimeout)
	var got []string
	for _, ev := range m.Events {
		got = append(got, eventLine(ev))
		if ev.PrevKv == nil || ev.PrevKv.Lease != 9 {
			t.Errorf("%s: %v, want prev_kv with lease 9", w.Req, e2e.EventString(&ev))
		}
	}
	want := []string{
		fmt.Sprintf("delete lr/a @%d", rev), fmt.Sprintf("delete lr/b @%d", rev), fmt.Sprintf("delete lr/c @%d", rev),
	}
	if m.ID != rev || !slices.Equal(got, want) {
		t.Errorf("%s after the revoke: id %d %q, want id %d %q", w.Req, m.ID, got, rev, want)
	}
}

// TestWatchErrors: a watch that cannot start answers a JSON error, not a
// stream.
func TestWatchErrors(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	tests := []struct {
		name   string
		query  string
		header []string
	}{
		{"negative start_revision", "key=a&start_revision=-1", nil},
		{"start_revision not a number", "key=a&start_revision=x", nil},
		{"unknown filter", "key=a&filters=noput,nothing", nil},
		{"range_end without key", "range_end=b", nil},
		{"empty key", "key=", nil},
		{"progress_notify not a boolean", "key=a&progress_notify=often", nil},
		{"Last-Event-ID not a number", "key=a", []string{"Last-Event-ID", "abc"}},
		{"Last-Event-ID negative", "key=a", []string{"Last-Event-ID", "-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Do(t, "GET", "/v1/watch?"+tt.query, nil, tt.header...).WantError(t, http.StatusBadRequest, "invalid_argument")
		})
	}
}

// TestWatchResume writes continuously while a watcher disconnects at
// random points and resumes with Last-Event-ID, once across a server
// restart, and checks that the union of what it received is exactly the
// history: nothing lost, nothing repeated, in order.
func TestWatchResume(t *testing.T) {
	t.Parallel()
	rng := e2e.TestRand(t, "HTTPKV_WATCH_SEED")
	s := e2e.StartServer(t)

	type ack struct {
		key string
		rev int64
	}
	var (
		mu     sync.Mutex
		acked  []ack
		writes int
	)
	ctx, stopWriting := context.WithCancel(context.Background())
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		// Each key is written once: a write whose answer was lost (the
		// server restarting) is never retried, so the final list of the
		// prefix is the whole history of it.
		for i := 0; ctx.Err() == nil; i++ {
			key := fmt.Sprintf("r/%06d", i)
			r, err := s.Send(ctx, "PUT", e2e.KeyPath(key), []byte("v"+strconv.Itoa(i)))
			mu.Lock()
			writes++
			if err == nil && r.Status == http.StatusOK {
				var p client.PutResponse
				if json.Unmarshal(r.Body, &p) == nil {
					acked = append(acked, ack{key, p.Header.Revision})
				}
			}
			mu.Unlock()
			if err != nil {
				time.Sleep(5 * time.Millisecond) // the server is restarting; do not spin
			}
		}
	}()
	defer func() { stopWriting(); <-writerDone }()
	ackCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}

	var got []string // every event received, in order
	var last int64   // the id to resume after
	segment := func(n int) *e2e.WatchStream {
		t.Helper()
		hdr := []string{}
		if last > 0 {
			hdr = []string{"Last-Event-ID", strconv.FormatInt(last, 10)}
		}
		// start_revision=1 is overridden by Last-Event-ID once there is one.
		w := e2e.OpenWatch(t, s, "key=r/&prefix=true&start_revision=1", hdr...)
		if last > 0 && w.Created.StartRevision != last+1 {
			t.Fatalf("%s with Last-Event-ID %d: start_revision %d, want %d", w.Req, last, w.Created.StartRevision, last+1)
		}
		for range n {
			m := w.NextData(e2e.WatchTimeout)
			for _, ev := range m.Events {
				got = append(got, eventLine(ev))
			}
			last = m.ID
		}
		return w
	}
	const segments = 6
	for i := range segments {
		e2e.Eventually(t, 10*time.Second, func() (bool, string) {
			return ackCount() > 50*(i+1), fmt.Sprintf("%d writes acknowledged, want %d", ackCount(), 50*(i+1))
		})
		w := segment(1 + rng.IntN(40))
		if i == segments/2 {
			// Restart with the stream open: it ends with canceled, and
			// whatever came before that counts.
			s.Restart()
			for {
				m := w.Next(e2e.WatchTimeout)
				if m.Kind == "canceled" {
					if m.Reason != "shutting down" {
						t.Errorf("%s: canceled %q at shutdown, want \"shutting down\"", w.Req, m.Reason)
					}
					break
				}
				if m.Kind == "message" {
					for _, ev := range m.Events {
						got = append(got, eventLine(ev))
					}
					last = m.ID
				}
			}
			w.WantEnd(e2e.WatchTimeout)
		}
		w.Close()
	}
	stopWriting()
	<-writerDone

	// The history of the prefix: each key written once, never deleted.
	var l client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=r/&prefix=true&limit=10000", nil).Ok(t, http.StatusOK, &l)
	if l.More {
		t.Fatalf("more than 10000 writes: shorten the test")
	}
	history := make([]client.KeyValue, len(l.Kvs))
	copy(history, l.Kvs)
	slices.SortFunc(history, func(a, b client.KeyValue) int { return int(a.ModRevision - b.ModRevision) })
	var want []string
	for _, kv := range history {
		if kv.Version != 1 {
			t.Fatalf("%s was written twice", e2e.KVString(&kv))
		}
		want = append(want, eventLine(client.WatchEvent{Type: "put", Kv: kv}))
	}
	// Read what is left in one last segment.
	end := history[len(history)-1].ModRevision
	w := segment(0)
	for last < end {
		m := w.NextData(e2e.WatchTimeout)
		for _, ev := range m.Events {
			got = append(got, eventLine(ev))
		}
		last = m.ID
	}
	if !slices.Equal(got, want) {
		t.Errorf("resumed watches received %d events, the history has %d", len(got), len(want))
		for i := range max(len(got), len(want)) {
			var g, h string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				h = want[i]
			}
			if g != h {
				t.Fatalf("first difference at event %d: received %q, history %q", i, g, h)
			}
		}
	}
	byRev := make(map[int64]string)
	for _, kv := range history {
		byRev[kv.ModRevision] = e2e.KeyOf(&kv)
	}
	for _, a := range acked {
		if byRev[a.rev] != a.key {
			t.Errorf("PUT %s acknowledged at revision %d, but the history has %q there", a.key, a.rev, byRev[a.rev])
		}
	}
	t.Logf("%d writes, %d acknowledged, %d events received over %d resumes", writes, len(acked), len(got), segments+1)
}

// TestWatchCompacted: a watch needing history below the compact revision
// still answers 200 and reports the compaction in-band, then ends; one
// starting exactly at the compact revision receives that revision.
func TestWatchCompacted(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// The revisions are those of a fresh store; a gateway's cluster may
	// have taken some before (its deployment's marker): at(n) is the
	// revision counted n on a fresh store.
	off := s.Put(t, "c/a", "1") - 2 // 2
	at := func(n int64) int64 { return n + off }
	s.Put(t, "c/b", "2")                                                                              // 3
	s.Put(t, "c/a", "3")                                                                              // 4
	s.Txn(t, `{"success":[{"delete":{"key":"c/a"}},{"put":{"key":"c/c","value":"5"}}]}`).Want(t, 200) // 5
	s.Put(t, "c/d", "6")                                                                              // 6
	s.Do(t, "POST", "/v1/compact", fmt.Appendf(nil, `{"revision":%d}`, at(5))).Want(t, 200)

	compacted := []struct {
		name   string
		query  string
		header []string
	}{
		{"start_revision below", fmt.Sprintf("key=c/&prefix=true&start_revision=%d", at(3)), nil},
		{"start_revision 1", "key=c/a&start_revision=1", nil},
		{"resume below", "key=c/&prefix=true", []string{"Last-Event-ID", fmt.Sprint(at(3))}},
		{"Last-Event-ID over start_revision", fmt.Sprintf("key=c/&prefix=true&start_revision=%d", at(6)), []string{"Last-Event-ID", "0"}},
	}
	for _, tt := range compacted {
		t.Run(tt.name, func(t *testing.T) {
			w := e2e.OpenWatch(t, s, tt.query, tt.header...)
			m := w.Next(e2e.WatchTimeout)
			if m.Kind != "compacted" || m.CompactRevision != at(5) || m.Header.Revision != at(6) {
				t.Fatalf("%s: %v, want compacted with compact_revision %d at revision %d", w.Req, m.Raw, at(5), at(6))
			}
			w.WantEnd(e2e.WatchTimeout)
		})
	}

	exact := []struct {
		name   string
		query  string
		header []string
	}{
		{"start_revision at", fmt.Sprintf("key=c/&prefix=true&start_revision=%d", at(5)), nil},
		{"resume at", "key=c/&prefix=true", []string{"Last-Event-ID", fmt.Sprint(at(4))}},
	}
	for _, tt := range exact {
		t.Run(tt.name, func(t *testing.T) {
			w := e2e.OpenWatch(t, s, tt.query, tt.header...)
			var got []string
			for range 2 {
				m := w.NextData(e2e.WatchTimeout)
				var evs []string
				for _, ev := range m.Events {
					evs = append(evs, eventLine(ev))
				}
				got = append(got, strings.Join(evs, "|"))
			}
			want := shiftRevisions([]string{"delete c/a @5|put c/c=5 @5", "put c/d=6 @6"}, off)
			if !slices.Equal(got, want) {
				t.Errorf("%s received %q, want %q", w.Req, got, want)
			}
		})
	}

	// A watch caught up before the compaction goes on across it.
	w := e2e.OpenWatch(t, s, "key=c/&prefix=true")
	s.Do(t, "POST", "/v1/compact", fmt.Appendf(nil, `{"revision":%d}`, at(6))).Want(t, 200)
	s.Put(t, "c/e", "7")
	if m := w.NextData(e2e.WatchTimeout); m.ID != at(7) {
		t.Errorf("%s after a compaction: %v, want the put at %d", w.Req, m.Raw, at(7))
	}
}

// TestWatchProgress: with progress_notify an idle watcher gets bookmarks
// with an id, at the revision up to which everything was sent; without it,
// none.
func TestWatchProgress(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--watch-progress-notify-interval=1s")
	s.Put(t, "other", "x")
	quiet := e2e.OpenWatch(t, s, "key=p")
	w := e2e.OpenWatch(t, s, "key=p&progress_notify=true")
	cur := w.Created.Header.Revision

	m := w.Next(e2e.WatchTimeout)
	if m.Kind != "progress" || m.ID != cur {
		t.Fatalf("%s: %v, want progress with id %d", w.Req, m.Raw, cur)
	}
	if m.Raw.Data != fmt.Sprintf(`{"type":"progress","header":{"revision":%d}}`, cur) {
		t.Errorf("%s: progress data %s, want only its type and the header", w.Req, m.Raw.Data)
	}
	put := s.Put(t, "p", "1")
	other := s.Put(t, "other", "y") // not for this watch, but the bookmark covers it
	if m := w.NextData(e2e.WatchTimeout); m.ID != put {
		t.Fatalf("%s: %v, want the put at %d", w.Req, m.Raw, put)
	}
	for {
		m := w.Next(e2e.WatchTimeout)
		if m.Kind != "progress" {
			t.Fatalf("%s: %v, want only progress while idle", w.Req, m.Raw)
		}
		if m.ID == other {
			break
		}
	}

	// The watch without progress_notify got nothing but the put.
	s.Put(t, "p", "2")
	for _, want := range []int64{put, other + 1} {
		if m := quiet.Next(e2e.WatchTimeout); m.Kind != "message" || m.ID != want {
			t.Errorf("%s: %v, want only the puts, the next at %d", quiet.Req, m.Raw, want)
		}
	}
}

// TestWatchNDJSON: Accept: application/x-ndjson frames the same payloads
// as one JSON object a line, with a type.
func TestWatchNDJSON(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// Revision 2 on a fresh store; a gateway's cluster may have taken
	// revisions before (its deployment's marker): at(n) is the revision
	// counted n on a fresh store.
	s.Put(t, "n", "0")
	cur := s.Status(t).Revision
	off := cur - 2
	at := func(n int64) int64 { return n + off }

	open := func(query string) (*bufio.Reader, func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/watch?"+query, nil)
		req.Header.Set("Accept", "application/x-ndjson")
		resp, err := s.Streams.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("GET /v1/watch?%s as NDJSON = %d %q, want 200 application/x-ndjson", query, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		e2e.CheckStreamHead(t, "GET /v1/watch?"+query, resp)
		stop := func() { cancel(); resp.Body.Close() }
		t.Cleanup(stop)
		return bufio.NewReader(resp.Body), stop
	}
	// readLine returns the next non-empty line as an object; blank lines
	// keep the connection alive.
	readLine := func(r *bufio.Reader) (e2e.WatchPayload, error) {
		t.Helper()
		for {
			type result struct {
				s   string
				err error
			}
			ch := make(chan result, 1)
			go func() {
				s, err := r.ReadString('\n')
				ch <- result{s, err}
			}()
			var res result
			select {
			case res = <-ch:
			case <-time.After(e2e.WatchTimeout):
				t.Fatalf("no NDJSON line within %v", e2e.WatchTimeout)
			}
			if res.err == io.EOF && res.s == "" {
				return e2e.WatchPayload{}, io.EOF
			}
			if res.err != nil {
				t.Fatalf("NDJSON line %q: %v", res.s, res.err)
			}
			if strings.TrimSpace(res.s) == "" {
				continue
			}
			l, err := e2e.DecodeWatchPayload([]byte(res.s), true)
			if err != nil {
				t.Fatalf("NDJSON line %q: %v", res.s, err)
			}
			if err := e2e.CheckTwins([]byte(res.s)); err != nil {
				t.Fatalf("NDJSON line %q: %v", res.s, err)
			}
			e2e.CheckWatchMessage(t, "GET /v1/watch (NDJSON)", []byte(res.s))
			return l, nil
		}
	}

	r, _ := open("key=n&prev_kv=true")
	l, _ := readLine(r)
	if l.Type != "created" || l.Header == nil || l.Header.Revision != cur || l.StartRevision != cur+1 {
		t.Fatalf("first NDJSON line %+v, want created at %d from %d", l, cur, cur+1)
	}
	s.Put(t, "n", "1")
	s.Do(t, "DELETE", "/v1/kv/n", nil).Want(t, 200)
	for i, want := range shiftRevisions([]string{"put n=1 @3", "delete n @4"}, off) {
		l, _ := readLine(r)
		if l.Type != "events" || l.Header == nil || l.Header.Revision != cur+1+int64(i) || len(l.Events) != 1 || eventLine(l.Events[0]) != want || l.Events[0].PrevKv == nil {
			t.Errorf("NDJSON line %+v, want events [%s] with prev_kv", l, want)
		}
	}

	s.Do(t, "POST", "/v1/compact", fmt.Appendf(nil, `{"revision":%d}`, at(3))).Want(t, 200)
	r, _ = open(fmt.Sprintf("key=n&start_revision=%d", at(2)))
	if l, _ := readLine(r); l.Type != "created" {
		t.Fatalf("first NDJSON line %+v, want created", l)
	}
	if l, _ := readLine(r); l.Type != "compacted" || l.CompactRevision != at(3) || l.Header == nil || l.Header.Revision != at(4) {
		t.Errorf("NDJSON line %+v, want compacted at %d", l, at(3))
	}
	if l, err := readLine(r); err != io.EOF {
		t.Errorf("NDJSON line %+v after compacted, want the end", l)
	}

	// Shutting down cancels NDJSON streams too.
	r, _ = open("key=n")
	readLine(r)
	s.Stop()
	if l, _ := readLine(r); l.Type != "canceled" || l.Reason != "shutting down" {
		t.Errorf("NDJSON line %+v at shutdown, want canceled, shutting down", l)
	}
	if l, err := readLine(r); err != io.EOF {
		t.Errorf("NDJSON line %+v after canceled, want the end", l)
	}
}

// TestWatchDisconnect: closing streams removes their watchers.
func TestWatchDisconnect(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	for i := range 20 {
		s.Put(t, fmt.Sprintf("d/%d", i), "v")
	}
	before := e2e.WatcherCount(t, s)
	const n = 40
	var streams []*e2e.WatchStream
	for i := range n {
		q := fmt.Sprintf("key=d/%d", i%20)
		switch i % 4 {
		case 1:
			q = "key=d/&prefix=true&start_revision=1" // catching up from the past
		case 2:
			q += "&progress_notify=true&prev_kv=true"
		case 3:
			q = "key=d/1&range_end=d/5"
		}
		streams = append(streams, e2e.OpenWatch(t, s, q))
	}
	e2e.Eventually(t, 10*time.Second, func() (bool, string) {
		c := e2e.WatcherCount(t, s)
		return c == before+n, fmt.Sprintf("%d watchers with %d streams open, want %d", c, n, before+n)
	})
	s.Put(t, "d/3", "w")
	for _, w := range streams {
		w.Close()
	}
	e2e.Eventually(t, 10*time.Second, func() (bool, string) {
		c := e2e.WatcherCount(t, s)
		return c == before, fmt.Sprintf("%d watchers after closing every stream, want %d", c, before)
	})
}

// TestWatchShutdown: SIGTERM ends every open stream with canceled,
// reason "shutting down", and the server exits cleanly.
func TestWatchShutdown(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	rev := s.Put(t, "k", "v") // 2 on a fresh store, later on a gateway's cluster
	streams := []*e2e.WatchStream{
		e2e.OpenWatch(t, s, "key=k"),
		e2e.OpenWatch(t, s, "key=k&start_revision=1"),
		e2e.OpenWatch(t, s, "prefix=true&progress_notify=true"),
		e2e.OpenWatch(t, s, "key=z&from_key=true&prev_kv=true"),
	}
	if m := streams[1].NextData(e2e.WatchTimeout); m.ID != rev {
		t.Fatalf("%s: %v, want the put at %d", streams[1].Req, m.Raw, rev)
	}
	s.Stop()
	for _, w := range streams {
		m := w.Next(e2e.WatchTimeout)
		if m.Kind != "canceled" || m.Reason != "shutting down" || m.Raw.Data != `{"type":"canceled","reason":"shutting down"}` {
			t.Errorf("%s at shutdown: %v, want canceled with {\"type\":\"canceled\",\"reason\":\"shutting down\"}", w.Req, m.Raw)
		}
		w.WantEnd(e2e.WatchTimeout)
	}
}

// revisionInLine is a revision in an event line of eventLine ("@7").
var revisionInLine = regexp.MustCompile(`@(\d+)`)

// shiftRevisions returns lines of eventLine with every revision moved
// by off: the lines a test wrote for a fresh store, for a store whose
// first revisions were taken before the test began.
func shiftRevisions(lines []string, off int64) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = revisionInLine.ReplaceAllStringFunc(l, func(m string) string {
			n, _ := strconv.ParseInt(m[1:], 10, 64)
			return "@" + strconv.FormatInt(n+off, 10)
		})
	}
	return out
}

// eventLine formats an event for comparisons: "put k=v @mod" or
// "delete k @mod".
func eventLine(e client.WatchEvent) string {
	if e.Type == "delete" {
		return fmt.Sprintf("delete %s @%d", e2e.KeyOf(&e.Kv), e.Kv.ModRevision)
	}
	return fmt.Sprintf("put %s=%s @%d", e2e.KeyOf(&e.Kv), e2e.ValueOf(&e.Kv), e.Kv.ModRevision)
}
