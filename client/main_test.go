package client

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/mvcc"
)

// testServer is the API served in process on a fresh store, behind a
// TCP proxy. Its connections can be cut (cut: the watch streams take
// theirs over from the HTTP server, which cannot close them), and its
// handler replaced by a new one over the same store, as a restart would
// (restart).
type testServer struct {
	URL     string // the proxy's
	backend *embedded.Backend
	http    *httptest.Server
	handler atomic.Pointer[httpapi.Handler]
	proxy   *proxy
	// direct writes to the server without the proxy: a write on a
	// connection the proxy just cut would fail (a PUT is not retried).
	direct *Client
}

func startServer(tb testing.TB) *testServer {
	tb.Helper()
	b, err := embedded.Open(tb.TempDir(), nil, nil, embedded.Options{
		Store: mvcc.Options{NoFsync: true},
		Auth:  auth.Config{BcryptCost: 4, TokenTTL: time.Minute},
	})
	if err != nil {
		tb.Fatal(err)
	}
	s := &testServer{backend: b}
	s.handler.Store(s.newHandler())
	s.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.handler.Load().ServeHTTP(w, r)
	}))
	s.proxy = startProxy(tb, s.http.Listener.Addr().String())
	s.URL = "http://" + s.proxy.ln.Addr().String()
	if s.direct, err = New(s.http.URL); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		s.proxy.close()
		s.handler.Load().Close()
		s.http.Close()
		b.Close()
	})
	return s
}

func (s *testServer) newHandler() *httpapi.Handler {
	return httpapi.NewHandler(s.backend, s.backend.Auth(), zerolog.Nop(), httpapi.Config{})
}

// cut closes every client connection: streams break mid-way.
func (s *testServer) cut() { s.proxy.cut() }

// restart serves with a new handler, which knows no stream of many
// watchers, over the same store, and cuts the connections of the old
// one, as a server's restart does.
func (s *testServer) restart() {
	old := s.handler.Swap(s.newHandler())
	old.Close()
	s.cut()
}

func newClient(tb testing.TB, s *testServer, opts ...Option) *Client {
	tb.Helper()
	c, err := New(s.URL, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// testContext is a context that ends with the test, or after a generous
// bound.
func testContext(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// proxy copies TCP connections to a target, and cuts them on demand.
type proxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]bool
}

func startProxy(tb testing.TB, target string) *proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns[in], p.conns[out] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.copy(in, out)
		go p.copy(out, in)
	}
}

// copy copies from src to dst until either ends, then closes both.
func (p *proxy) copy(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// cut closes every connection through the proxy.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *proxy) close() {
	p.ln.Close()
	p.cut()
	p.wg.Wait()
}
