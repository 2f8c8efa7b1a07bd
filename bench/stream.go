package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/r3labs/sse/v2"
	"gopkg.in/cenkalti/backoff.v1"
)

// watcher is one streaming watch of the watch workload. Its counters are
// its own, so that ten thousand of them do not contend on one cache line;
// latencies go to a histogram shared with a few other watchers.
type watcher struct {
	hist   *Histogram
	events atomic.Int64 // events received
	last   atomic.Int64 // unix nanoseconds of the latest receipt
}

// errStreamEnded reports a stream that the server ended on purpose
// (compacted or canceled).
var errStreamEnded = errors.New("the server ended the watch")

// receive accounts for one JSON message, whose values are base64 when
// b64 is set: every value in it starts with the unix nanoseconds at which
// its put was sent.
func (w *watcher) receive(msg []byte, b64 bool) {
	now := time.Now().UnixNano()
	w.count(now, scanEvents(msg, b64, now, w.hist))
}

// count adds n events received at now.
func (w *watcher) count(now int64, n int) {
	if n > 0 {
		w.events.Add(int64(n))
		w.last.Store(now)
	}
}

var valueField = []byte(`"value":"`)

// scanEvents counts the put events of one watch message and records the
// latency of each, now minus the send time that starts its value. Both
// servers write one "value" field per put event (the tool asks for no
// previous versions and writes no empty values, which etcd would leave
// out). The message is scanned, not decoded: decoding JSON for every
// delivery would cost the shared cores far more than the servers spend
// producing it.
func scanEvents(msg []byte, b64 bool, now int64, h *Histogram) int {
	n := 0
	var dec [21]byte
	for {
		i := bytes.Index(msg, valueField)
		if i < 0 {
			return n
		}
		msg = msg[i+len(valueField):]
		n++
		stamp := msg
		if b64 {
			// 28 base64 characters carry the first 21 bytes; values are
			// at least stampLen (19) bytes long, so there are 28.
			if len(msg) < 28 {
				continue
			}
			if _, err := base64.StdEncoding.Decode(dec[:], msg[:28]); err != nil {
				continue
			}
			stamp = dec[:]
		}
		if sent, ok := parseStamp(stamp); ok {
			h.Record(time.Duration(now - sent))
		}
	}
}

// parseStamp reads the stampLen decimal digits at the start of b.
func parseStamp(b []byte) (int64, bool) {
	if len(b) < stampLen {
		return 0, false
	}
	var v int64
	for _, c := range b[:stampLen] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// putStamp writes the send time t over the start of value.
func putStamp(value []byte, t time.Time) {
	v := t.UnixNano()
	for i := stampLen - 1; i >= 0; i-- {
		value[i] = byte('0' + v%10)
		v /= 10
	}
}

// openStream sends the request that opens a streaming watch and returns
// the body of its 200 answer.
func openStream(client *http.Client, req *http.Request) (io.ReadCloser, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("watch: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return resp.Body, nil
}

// readNDJSON reads etcd's gateway stream: one JSON object a line, the
// first saying "created", each later one holding a batch of events.
func (w *watcher) readNDJSON(r io.Reader, created func()) error {
	isCreated := false
	return readLines(r, func(line []byte) error {
		switch {
		case len(line) == 0:
			return nil
		case bytes.HasPrefix(line, []byte(`{"error"`)) || bytes.Contains(line, []byte(`"canceled":true`)):
			return fmt.Errorf("%w: %s", errStreamEnded, line)
		case !isCreated && bytes.Contains(line, []byte(`"created":true`)):
			isCreated = true
			created()
			return nil
		}
		w.receive(line, true)
		return nil
	})
}

// readSSE reads httpkv's stream with a lean line reader: SSE fields, a
// blank line ending each message.
//
// Why not the r3labs client by default: at thousands of watchers on two
// cores the tool shares the CPU with the server, so what the tool spends
// per delivery is taken from the server. The r3labs client passes each
// message through two goroutines and a channel, splits every message with
// bytes.FieldsFunc and allocates several slices per event; this reader
// copies the data line once and scans it in place. Measured here with
// 1,000 watchers and 64 writers against one httpkv, back to back: the
// r3labs client used 4.6 us of the tool's CPU per event delivered and got
// 92,000 events/s; this reader 2.2 us and 165,000 events/s.
// `--sse-client r3labs` still runs it.
func (w *watcher) readSSE(r io.Reader, created func()) error {
	return readSSEMessages(r, func(event, data []byte) error { return w.deliver(event, data, created) })
}

// deliver takes one message of httpkv's stream: data (events), created,
// or the end of the watch.
func (w *watcher) deliver(event, data []byte, created func()) error {
	switch string(event) {
	case "":
		w.receive(data, false)
	case "created":
		created()
	case "compacted", "canceled":
		return fmt.Errorf("%w: %s %s", errStreamEnded, event, data)
	}
	return nil
}

// readSSEMessages calls fn with the event name and the data of each
// message of a stream, until r ends or fn fails; blocks without data (a
// retry, a keep-alive) are skipped. Both are valid only during the call.
func readSSEMessages(r io.Reader, fn func(event, data []byte) error) error {
	var event, data []byte
	hasData := false
	return readLines(r, func(line []byte) error {
		if len(line) == 0 { // end of a message
			var err error
			if hasData {
				err = fn(event, data)
			}
			event, data, hasData = event[:0], data[:0], false
			return err
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			event = append(event[:0], value...)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
		return nil
	})
}

// readLines calls fn with each line of r, its end of line removed, until
// r ends or fn fails. The line is valid only during the call.
func readLines(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 4096)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			return err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
		if err := fn(line); err != nil {
			return err
		}
	}
}

// streamR3labs reads httpkv's stream with github.com/r3labs/sse/v2. Two of
// its defaults matter here: it reconnects with exponential backoff after
// an error (but not after a clean close), which would hide a lost stream,
// so the strategy is to stop; and its largest message is 64 KiB, raised
// to hold the largest message the workload can produce.
func (w *watcher) streamR3labs(ctx context.Context, url string, client *http.Client, maxMessage int, created func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := sse.NewClient(url, sse.ClientMaxBufferSize(maxMessage))
	c.Connection = client
	c.ReconnectStrategy = &backoff.StopBackOff{}
	var ended error
	err := c.SubscribeRawWithContext(ctx, func(ev *sse.Event) {
		switch string(ev.Event) {
		case "":
			if len(ev.Data) > 0 {
				w.receive(ev.Data, false)
			}
		case "created":
			created()
		case "compacted", "canceled":
			ended = fmt.Errorf("%w: %s %s", errStreamEnded, ev.Event, ev.Data)
			cancel()
		}
	})
	if ended != nil {
		return ended
	}
	if err == nil && ctx.Err() == nil {
		err = io.EOF // the server closed the stream
	}
	return err
}
