package client

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

// Reconnection delays: the first retry waits firstRetry, each failed
// one twice the last, up to the stream's retry field (1 s from httpkv),
// or defaultRetry.
const (
	firstRetry   = 50 * time.Millisecond
	defaultRetry = time.Second
)

// step is what a stream's reader does after a message.
type step int

const (
	stepNext      step = iota // read the next message
	stepReconnect             // the server ends the stream but will take it back: reconnect
	stepStop                  // the reader is done
)

// follower reads a stream of Server-Sent Events for as long as its
// reader wants, reconnecting after a lost connection and resuming with
// Last-Event-ID after the id of the last message handled.
type follower struct {
	c *Client
	// open makes the request for a connection, which resumes after
	// cursor (it may set cursor, which is "" before any message). Its
	// error is a connection's: it ends the stream unless retryable.
	open func(ctx context.Context) (request, error)
	// handle takes each message. Its error ends the stream.
	handle func(ev sseEvent) (step, error)
	// refused, if set, says whether to retry after an answer that is not
	// 200 and that retryable would not retry (true), or end the stream
	// with it (false).
	refused func(err *Error) bool
	// onRetry, if set, hears of every lost connection before a retry.
	onRetry func(error)

	cursor   string        // the id of the last message handled
	maxDelay time.Duration // the longest wait between retries: the stream's retry field
}

// run reads until handle stops or fails, or ctx ends (then it returns
// ctx's error).
func (f *follower) run(ctx context.Context) error {
	delay := firstRetry
	if f.maxDelay == 0 {
		f.maxDelay = defaultRetry
	}
	for {
		connected, err := f.connect(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var e *Error
		retry := retryable(err) || errors.As(err, &e) && f.refused != nil && f.refused(e)
		if !retry {
			return err
		}
		if connected {
			delay = firstRetry
		}
		if f.onRetry != nil {
			f.onRetry(err)
		}
		if err := sleep(ctx, jitter(delay)); err != nil {
			return err
		}
		delay = min(2*delay, f.maxDelay)
	}
}

// errReconnect is a stream the server ended and will take back.
var errReconnect = errors.New("the server ended the stream; resuming")

// connect reads one connection. It returns nil when the reader is done,
// and otherwise why the connection ended; connected reports that it
// was answered 200.
func (f *follower) connect(ctx context.Context) (connected bool, err error) {
	r, err := f.open(ctx)
	if err != nil {
		return false, err
	}
	if r.header == nil {
		r.header = http.Header{}
	}
	r.header.Set("Accept", "text/event-stream")
	if f.cursor != "" {
		r.header.Set("Last-Event-ID", f.cursor)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the body's read, whatever happens
	resp, err := f.c.send(ctx, r)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return false, answerError(resp, body)
	}
	sr := newSSEReader(resp.Body)
	defer func() {
		if sr.retry > 0 {
			f.maxDelay = time.Duration(sr.retry) * time.Millisecond
		}
	}()
	for {
		ev, err := sr.next()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // streams end with a message that says why
			}
			return true, &ConnError{Method: r.method, URL: f.c.base + r.path, Err: err}
		}
		st, err := f.handle(ev)
		if err != nil {
			return true, err
		}
		switch st {
		case stepStop:
			return true, nil
		case stepReconnect:
			return true, errReconnect
		}
		if ev.hasID {
			f.cursor = ev.id
		}
	}
}

// retryable reports whether a stream that ended with err should be
// taken up again: after a lost connection, an overloaded or
// unavailable server, or a server that ended the stream to come back.
func retryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Status == http.StatusTooManyRequests || e.Status >= 500
	}
	return isConnError(err) || errors.Is(err, errReconnect)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// jitter is d give or take a fifth, so that the clients of a server
// that comes back do not all reconnect at once.
func jitter(d time.Duration) time.Duration {
	return d - d/5 + rand.N(2*d/5+1)
}
