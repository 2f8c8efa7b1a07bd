package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// stalledPut is a PUT whose client sent its body but the last byte.
type stalledPut struct {
	conn   net.Conn
	status chan int // the answer's status, once it comes; 0 for none
}

// startStalledPut opens a connection to s and sends a PUT with header
// and a body of size bytes but its last one. It returns once those bytes
// are written, or refused (a server that refuses a body answers and
// closes the connection).
func startStalledPut(tb testing.TB, s *e2e.Server, size int, header string) *stalledPut {
	tb.Helper()
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		tb.Errorf("dial %s: %v", s.Addr, err)
		return nil
	}
	tb.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(e2e.RequestTimeout))
	p := &stalledPut{conn: conn, status: make(chan int, 1)}
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			p.status <- 0
			return
		}
		resp.Body.Close()
		p.status <- resp.StatusCode
	}()
	head := fmt.Sprintf("PUT /v1/kv/slow HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n", s.Addr, header, size)
	if _, err := io.WriteString(conn, head); err == nil {
		_, _ = conn.Write(make([]byte, size-1))
	}
	return p
}

// finish returns the status of the answer: the one already given, or the
// one given once the last byte is sent.
func (p *stalledPut) finish() int {
	select {
	case st := <-p.status:
		return st
	default:
	}
	_, _ = p.conn.Write([]byte{0})
	return <-p.status
}

// TestSlowBodiesBounded sends 150 PUTs of bodies one byte short of the
// 1.5 MiB limit and stalls each before its last byte, as a client that
// wants the server to hold its memory would (225 MiB in all). Without a
// token, while auth is enabled, no body is read at all; with auth off,
// bodies are taken until --max-inflight-request-bytes (16 MiB here) and
// the others answered 429 at once. Either way the server's heap grows by
// about the bound, not by the bodies.
func TestSlowBodiesBounded(t *testing.T) {
	t.Parallel()
	const (
		n        = 150
		size     = 3 << 19 // --max-request-bytes
		inflight = 16 << 20
		mib      = 1 << 20
	)
	for _, tt := range []struct {
		name  string
		auth  bool
		bound float64 // most the heap may grow, in bytes
	}{
		{"unauthenticated, auth on", true, 16 * mib},
		{"auth off", false, inflight + 16*mib},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := e2e.StartServer(t, e2e.AuthBcryptCost, fmt.Sprintf("--max-inflight-request-bytes=%d", inflight))
			if tt.auth {
				none := e2e.AuthCaller{Name: "setup"}
				e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"root","password":"pw"}`)
				e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/root/roles/root", "")
				e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/enable", "")
			}
			before := s.Metric(t, "go_memstats_heap_inuse_bytes")

			puts := make([]*stalledPut, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					puts[i] = startStalledPut(t, s, size, "Authorization: Bearer not-a-token\r\n")
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			// Every body is written but its last byte, or refused: those
			// the server took are in its memory now.
			grown := s.Metric(t, "go_memstats_heap_inuse_bytes") - before
			counts := map[int]int{}
			for _, p := range puts {
				counts[p.finish()]++
			}
			t.Logf("%d stalled PUTs of %d bytes: the heap grew %.1f MiB; answers %v", n, size, grown/mib, counts)
			if grown > tt.bound {
				t.Errorf("%d stalled PUTs of %d bytes grew the heap by %.1f MiB, want at most %.1f", n, size, grown/mib, tt.bound/mib)
			}
			want, wantAtLeast := http.StatusTooManyRequests, n-inflight/size
			if tt.auth {
				want, wantAtLeast = http.StatusUnauthorized, n
			}
			if counts[want] < wantAtLeast {
				t.Errorf("%d stalled PUTs: answers %v, want at least %d answered %d", n, counts, wantAtLeast, want)
			}
		})
	}
}

// TestMaxConnections serves at most --max-connections connections, and
// one spare past them for /health: with two streams open on a server that
// takes two, a third connection answers /health, and 429 to anything
// else; with the spare held too, a fourth is not answered until a stream
// leaves.
func TestMaxConnections(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-connections=2", "--max-stream-connections=2")
	// The client of the start-up checks keeps a connection: let it go.
	s.Client.CloseIdleConnections()
	// Each is created once it returns.
	w1 := e2e.OpenWatch(t, s, "key=a")
	e2e.OpenWatch(t, s, "key=b")

	status, closes, spare := rawRequest(t, s.Addr, "GET /health")
	spare.Close()
	if status != http.StatusOK || !closes {
		t.Fatalf("GET /health on a third connection while two streams hold both = %d (closes: %v), want 200 on a spare connection that closes", status, closes)
	}
	status, closes, spare = rawRequest(t, s.Addr, "GET /v1/kv/a")
	spare.Close()
	if status != http.StatusTooManyRequests || !closes {
		t.Fatalf("GET /v1/kv/a on the spare connection = %d (closes: %v), want 429 and the connection closed", status, closes)
	}
	// A connection that sends nothing holds the spare.
	idle, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fourth := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := fourth.Get(s.URL + "/health"); err == nil {
		resp.Body.Close()
		t.Fatalf("GET /health on a fourth connection = %s while streams and the spare hold every connection, want no answer", resp.Status)
	} else if !strings.Contains(err.Error(), "Client.Timeout") {
		t.Fatalf("GET /health on a fourth connection: %v, want a timeout", err)
	}
	w1.Close()
	fourth.Timeout = e2e.RequestTimeout
	resp, err := fourth.Get(s.URL + "/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health once a stream left = %v, %v; want 200", resp, err)
	}
	resp.Body.Close()
}

// TestStalledListReader asks for a list of 32 MiB (more than the
// sockets' buffers hold) and stops reading after the status line, as a
// client that wants to freeze the store would. The server builds the
// answer and ends its read transaction before writing it: while the
// client stalls, a physical compaction, puts and gets complete (they
// waited for the client before, until the server cut it off), and the
// client, once it reads on, gets the whole answer.
func TestStalledListReader(t *testing.T) {
	t.Parallel()
	// The server does not cut the client off while it stalls, however
	// long the requests meanwhile take; a store that waited for the
	// client would wait that long too, past stallGuard.
	s := e2e.StartServer(t, fmt.Sprintf("--write-timeout=%v", e2e.StalledWriteTimeout))
	const stallGuard = e2e.StalledWriteTimeout / 2
	const n = 32
	value := strings.Repeat("v", 1<<20)
	for i := range n {
		s.Put(t, fmt.Sprintf("big/%02d", i), value)
	}
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /v1/kv?key=big/&prefix=true HTTP/1.1\r\nHost: %s\r\n\r\n", s.Addr)
	// Each read must bring something within the guard: building the
	// answer, and reading it on a loaded machine, take what they take.
	br := bufio.NewReaderSize(progressReader{conn, stallGuard}, 16)
	status, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("GET /v1/kv?key=big/&prefix=true: status line %q, %v", status, err)
	}

	// The answer is on its way, and the client takes no more of it.
	ctx, cancel := context.WithTimeout(context.Background(), stallGuard)
	defer cancel()
	rev := s.Put(t, "other", "x")
	s.DoContext(t, ctx, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d,"physical":true}`, rev))).Want(t, http.StatusOK)
	for i := range 5 {
		s.DoContext(t, ctx, "PUT", e2e.KeyPath(fmt.Sprintf("during/%d", i)), []byte("v")).Want(t, http.StatusOK)
		s.DoContext(t, ctx, "GET", e2e.KeyPath("other"), nil).Want(t, http.StatusOK)
	}
	s.DoContext(t, ctx, "GET", "/v1/kv?key=during/&prefix=true&count_only=true", nil).Want(t, http.StatusOK)

	// The client reads on: the answer is whole.
	resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(status), br)), nil)
	if err != nil {
		t.Fatalf("reading the rest of the answer: %v", err)
	}
	var l client.ListResponse
	body, err := io.ReadAll(resp.Body)
	if err != nil || json.Unmarshal(body, &l) != nil || len(l.Kvs) != n || e2e.ValueOf(&l.Kvs[n-1]) != value {
		t.Fatalf("the stalled list, read on: %d bytes (%v), want %d keys of 1 MiB", len(body), err, n)
	}
}

// progressReader reads conn, each read failing if nothing comes within
// guard: a bound on a stuck peer, not on how fast a loaded machine goes.
type progressReader struct {
	conn  net.Conn
	guard time.Duration
}

func (r progressReader) Read(p []byte) (int, error) {
	_ = r.conn.SetReadDeadline(time.Now().Add(r.guard))
	return r.conn.Read(p)
}

// TestHeldAnswersBounded has clients ask for a 12 MiB list and stop
// reading, as a client that wants the server to hold its memory would
// (24 of them: 288 MiB of answers). The answers being sent, and the keys
// an answer is being built from, count against --max-held-answer-bytes
// (32 MiB here), so two are held and the others answer 429 as soon as
// they find no room, before building theirs; the heap grows by about
// the bound (the answers held), not by the answers. Small answers go
// on, and once the stalled clients leave, large ones are served again.
func TestHeldAnswersBounded(t *testing.T) {
	t.Parallel()
	const (
		n     = 24
		held  = 32 << 20
		value = 256 << 10
		keys  = 48 // a 12 MiB answer
		mib   = 1 << 20
	)
	s := e2e.StartServer(t, fmt.Sprintf("--max-held-answer-bytes=%d", held))
	// The heap in use counts garbage not yet collected too: over etcd, a
	// refused list has had etcd's whole answer decoded before its keys
	// were charged. The collector runs often here, so that the heap in
	// use is what the server keeps, not when the collector last ran.
	s.Env = []string{"GOGC=10"}
	s.Restart()
	v := strings.Repeat("v", value)
	for i := range keys {
		s.Put(t, fmt.Sprintf("big/%02d", i), v)
	}
	before := s.Metric(t, "go_memstats_heap_inuse_bytes")

	// One after the other, so that what the heap holds is what the server
	// keeps for stalled clients, not answers being built at once.
	statuses := map[string]int{}
	var conns []net.Conn
	start := time.Now()
	for range n {
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
		_ = c.SetDeadline(time.Now().Add(2 * e2e.RequestTimeout))
		fmt.Fprintf(c, "GET /v1/kv?key=big/&prefix=true HTTP/1.1\r\nHost: %s\r\n\r\n", s.Addr)
		line, err := bufio.NewReaderSize(c, 16).ReadString('\n')
		if err != nil {
			t.Fatalf("stalled list %d: %v", len(conns), err)
		}
		statuses[strings.TrimSpace(line)]++
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	grown := s.Metric(t, "go_memstats_heap_inuse_bytes") - before
	t.Logf("%d stalled lists of 12 MiB: the heap grew %.1f MiB; answers %v", n, grown/mib, statuses)
	// Two answers fit in the bound at once. A held answer that its client
	// takes nothing of for 30 s is cut off and gives its bytes back, so
	// when the requests took longer (a slow machine, the race detector),
	// two more may have found room per 30 s.
	perDeadline := held / (keys * value)
	most := perDeadline * (1 + int(time.Since(start)/(30*time.Second)))
	if ok := statuses["HTTP/1.1 200 OK"]; ok < 1 || ok > most {
		t.Errorf("answers %v in %v: want 1 to %d held and sent, the others 429", statuses, time.Since(start), most)
	}
	if statuses["HTTP/1.1 429 Too Many Requests"] < n-most {
		t.Errorf("answers %v: want at least %d answered 429", statuses, n-most)
	}
	if bound := float64(2*held + 32*mib); grown > bound {
		t.Errorf("%d stalled lists grew the heap by %.1f MiB, want at most %.1f", n, grown/mib, bound/mib)
	}

	s.Do(t, "GET", e2e.KeyPath("big/00"), nil).Want(t, http.StatusOK)
	for _, c := range conns {
		c.Close()
	}
	e2e.Eventually(t, e2e.RequestTimeout, func() (bool, string) {
		r := s.Do(t, "GET", "/v1/kv?key=big/&prefix=true", nil)
		return r.Status == http.StatusOK, fmt.Sprintf("a large list after the stalled clients left: %d", r.Status)
	})
}
