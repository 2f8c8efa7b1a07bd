package tests

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// sseConn is the connection of a Server-Sent Events stream under test
// (GET /v1/watch, GET /v1/watch/streams/{stream}): the request sent and,
// once started, a goroutine that parses the body and hands each block
// over on results. results is unbuffered, so that a test that stops
// reading stops the connection, as a slow client would.
type sseConn struct {
	tb      testing.TB
	req     string // the request, for failure messages
	ctx     context.Context
	cancel  context.CancelFunc
	results chan sseResult
	done    chan struct{} // closed when the reader goroutine has returned
	started bool          // the reader goroutine runs
}

// dialSSE sends GET url through client with the request headers (name,
// value pairs) and returns the answer, whose body start reads or the
// caller closes. req names the request in failure messages. The
// connection is closed on cleanup.
func dialSSE(tb testing.TB, client *http.Client, url, req string, header ...string) (*http.Response, *sseConn) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &sseConn{tb: tb, req: req, ctx: ctx, cancel: cancel, results: make(chan sseResult), done: make(chan struct{})}
	hr, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		hr.Header.Set(header[i], header[i+1])
	}
	// The stream has no deadline of its own: every wait on it has one.
	resp, err := client.Do(hr)
	if err != nil {
		cancel()
		tb.Fatalf("%s: %v", req, err)
	}
	tb.Cleanup(c.close)
	return resp, c
}

// start fails unless the answer is a 200 event stream as the document
// describes it, and reads its body.
func (c *sseConn) start(resp *http.Response) {
	c.tb.Helper()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.tb.Fatalf("%s = %d %s, want 200", c.req, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		resp.Body.Close()
		c.tb.Fatalf("%s: Content-Type %q, want text/event-stream; charset=utf-8", c.req, ct)
	}
	e2e.CheckStreamHead(c.tb, c.req, resp)
	c.started = true
	go c.read(resp.Body)
}

// read parses the body until it ends or the connection is closed.
func (c *sseConn) read(body io.ReadCloser) {
	defer close(c.done)
	defer body.Close()
	p := newSSEParser(body)
	for {
		m, err := p.Next()
		select {
		case c.results <- sseResult{m, err}:
		case <-c.ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// wantMore fails the test when reading the next message of the stream
// gave err instead: the stream ended.
func (c *sseConn) wantMore(err error) {
	c.tb.Helper()
	if err != nil {
		c.tb.Fatalf("%s: the stream ended (%v), want another message", c.req, err)
	}
}

// close disconnects and waits for the reader goroutine.
func (c *sseConn) close() {
	c.cancel()
	if c.started {
		<-c.done
	}
}
