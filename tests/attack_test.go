package tests

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// The attacks of the third hardening round on watch streams, at the
// scale they were made, against the binary: what the server holds stays
// within its bounds, whatever the number of streams, users and addresses.
// Each logs its figures (docs/reliability.md).

// attackValue is the value of the attacks' puts: 1.4 MB of 0x01, which
// JSON escapes in six (\u0001), 8.4 MB once encoded.
var attackValue = strings.Repeat("\x01", 1400_000)

// stalledReader opens GET path on a connection from ip ("" for any)
// whose receive buffer is 4 KiB, sends the request with header (name,
// value pairs), and reads nothing: a client that stopped reading.
func stalledReader(tb testing.TB, s *e2e.Server, ip, path string, header ...string) net.Conn {
	tb.Helper()
	d := net.Dialer{Timeout: e2e.RequestTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	if ip != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	c, err := d.Dial("tcp", s.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	var h strings.Builder
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&h, "%s: %s\r\n", header[i], header[i+1])
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n", path, h.String())
	return c
}

// TestAttackUserStreamsLargeValue: with auth on, one user's 32 streams
// (the per-user cap), one watcher each, readers stalled with a 4 KiB
// receive buffer, and one put of 1.4 MB of 0x01. The streams share one
// encoding of it, counted once against --watch-stream-buffer-total-bytes
// (before, each stream held three copies, counted raw or not at all:
// resident memory went from 7 MB to 1.06 GB, and the streams counted
// 2.69e8 bytes).
func TestAttackUserStreamsLargeValue(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost)
	e2e.EnableAuth(t, s, "root-pw")
	auth := []string{"Authorization", "Bearer " + e2e.AuthLogin(t, s, "root", "root-pw")}
	for range 32 {
		id, _ := s.CreateStream(t, `{"watches":[{"key":"big"}]}`, auth...)
		stalledReader(t, s, "", "/v1/watch/streams/"+id, auth...)
	}
	s.WaitStreams(t, 32)
	before := s.RSS(t)
	s.Do(t, "PUT", "/v1/kv/big", []byte(attackValue), auth...).Want(t, http.StatusOK)
	f := s.SampleFor(t, 3*time.Second)
	t.Logf("32 stalled streams of one user, a put of %d bytes of 0x01: resident memory %d MB, at most %.0f MB; the streams counted at most %.0f bytes, the store %.0f",
		len(attackValue), before>>20, f.RSS/(1<<20), f.Buffered, f.Pending)
	if grown := f.RSS - float64(before); grown > 128<<20 {
		t.Fatalf("resident memory grew %.0f MB, want under 128 MB: the streams copy the put", grown/(1<<20))
	}
	if f.Buffered > 4*6*float64(len(attackValue)) {
		t.Fatalf("the streams counted %.0f bytes, want about one encoding of the put", f.Buffered)
	}
}

// TestAttackStreamsFromAddresses: with auth off, 4 client addresses of 32
// streams (the per-address cap), 10 watchers each, readers stalled with a
// 4 KiB receive buffer, and three puts of 1.4 MB of 0x01. The streams
// hold within --watch-stream-buffer-total-bytes, counted as encoded
// (before: resident memory 3.99 GB, and the streams counted 1.08e9
// bytes, four times that bound).
func TestAttackStreamsFromAddresses(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		from := s.From(ip)
		watches := `{"watches":[` + strings.TrimSuffix(strings.Repeat(`{"key":"big"},`, 10), ",") + `]}`
		for range 32 {
			id, _ := from.CreateStream(t, watches)
			stalledReader(t, s, ip, "/v1/watch/streams/"+id)
		}
	}
	s.WaitStreams(t, 128)
	before := s.RSS(t)
	for range 3 {
		s.Do(t, "PUT", "/v1/kv/big", []byte(attackValue)).Want(t, http.StatusOK)
	}
	f := s.SampleFor(t, 3*time.Second)
	t.Logf("4 addresses of 32 stalled streams of 10 watchers, 3 puts of %d bytes of 0x01: resident memory %d MB, at most %.0f MB; the streams counted at most %.0f bytes, the store %.0f",
		len(attackValue), before>>20, f.RSS/(1<<20), f.Buffered, f.Pending)
	if grown := f.RSS - float64(before); grown > 256<<20 {
		t.Fatalf("resident memory grew %.0f MB, want under 256 MB", grown/(1<<20))
	}
	if f.Buffered > 256<<20 || f.Pending > 256<<20 {
		t.Fatalf("the streams counted %.0f bytes and the store %.0f, want each within its bound of 256 MiB", f.Buffered, f.Pending)
	}
}

// TestAttackWatchersFromAddresses: 4 client addresses add watchers to
// streams of their own, 1,000 at a time, until refused. The server holds
// --max-watchers (100,000) at most, 25,000 per address, whatever the
// number of streams (before, the bound was 10,000 per stream and 32
// streams per address: four addresses held 1.28 M watchers and 1.35 GB
// in 18 s). Over etcd the watchers are in the streams' records, read by
// no gateway here: the bound is the deployment's, counted in etcd.
func TestAttackWatchersFromAddresses(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	before := s.RSS(t)
	var batch strings.Builder
	batch.WriteString(`{"watches":[`)
	for i := range 1000 {
		if i > 0 {
			batch.WriteByte(',')
		}
		fmt.Fprintf(&batch, `{"key":"w/%04d"}`, i)
	}
	batch.WriteString(`]}`)
	added := 0
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		from := s.From(ip)
		for {
			r := from.Do(t, "POST", "/v1/watch/streams", []byte(batch.String()), "Content-Type", "application/json")
			if r.Status == http.StatusTooManyRequests {
				break
			}
			r.Want(t, http.StatusCreated)
			added += 1000
		}
	}
	admitted := s.Metric(t, "httpkv_watchers_admitted")
	grown := s.RSS(t) - before
	t.Logf("4 addresses added %d watchers before being refused (%v admitted); resident memory grew %d MB", added, admitted, grown>>20)
	// A gateway admits, to serve them, only the watchers of streams it
	// reads: none here.
	want := 100000.0
	if e2e.OnEtcd(t) {
		want = 0
	}
	if added != 100000 || admitted != want {
		t.Fatalf("4 addresses added %d watchers (%v admitted), want the server's 100,000 (%v admitted)", added, admitted, want)
	}
	if grown > 512<<20 {
		t.Fatalf("resident memory grew %d MB for 100,000 watchers, want under 512 MB", grown>>20)
	}
}
