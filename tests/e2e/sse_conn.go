package e2e

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/internal/ssetest"
)

// SSEConn is the connection of a Server-Sent Events stream under test
// (GET /v1/watch, GET /v1/watch/streams/{stream}): the request sent and,
// once started, a goroutine that parses the body and hands each block
// over on Results. Results is unbuffered, so that a test that stops
// reading stops the connection, as a slow client would.
type SSEConn struct {
	TB      testing.TB // the test the stream fails
	Req     string     // the request, for failure messages
	ctx     context.Context
	cancel  context.CancelFunc
	Results chan SSEResult
	done    chan struct{} // closed when the reader goroutine has returned
	started bool          // the reader goroutine runs
}

// DialSSE sends GET url through client with the request headers (name,
// value pairs) and returns the answer, whose body Start reads or the
// caller closes. req names the request in failure messages. The
// connection is closed on cleanup.
func DialSSE(tb testing.TB, client *http.Client, url, req string, header ...string) (*http.Response, *SSEConn) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &SSEConn{TB: tb, Req: req, ctx: ctx, cancel: cancel, Results: make(chan SSEResult), done: make(chan struct{})}
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
	tb.Cleanup(c.Close)
	return resp, c
}

// Start fails unless the answer is a 200 event stream as the document
// describes it, and reads its body.
func (c *SSEConn) Start(resp *http.Response) {
	c.TB.Helper()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.TB.Fatalf("%s = %d %s, want 200", c.Req, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		resp.Body.Close()
		c.TB.Fatalf("%s: Content-Type %q, want text/event-stream; charset=utf-8", c.Req, ct)
	}
	CheckStreamHead(c.TB, c.Req, resp)
	c.started = true
	go c.read(resp.Body)
}

// read parses the body until it ends or the connection is closed.
func (c *SSEConn) read(body io.ReadCloser) {
	defer close(c.done)
	defer body.Close()
	p := ssetest.NewParser(body)
	for {
		m, err := p.Next()
		select {
		case c.Results <- SSEResult{m, err}:
		case <-c.ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// WantMore fails the test when reading the next message of the stream
// gave err instead: the stream ended.
func (c *SSEConn) WantMore(err error) {
	c.TB.Helper()
	if err != nil {
		c.TB.Fatalf("%s: the stream ended (%v), want another message", c.Req, err)
	}
}

// Close disconnects and waits for the reader goroutine.
func (c *SSEConn) Close() {
	c.cancel()
	if c.started {
		<-c.done
	}
}
