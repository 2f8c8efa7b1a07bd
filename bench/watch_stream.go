package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// streamMux carries watchers of the watch workload over one stream of
// many watchers (/v1/watch/streams): one connection for all of them, as
// etcd's gRPC watch stream on one connection. Each watcher is added to
// the stream, and one reader hands every message to its watcher by
// watch_id.
type streamMux struct {
	s        *httpkvServer
	once     sync.Once
	id       string
	startErr error         // why the stream could not start
	readErr  error         // why the stream ended; set before done is closed
	done     chan struct{} // closed when the reader has returned

	mu    sync.Mutex
	byID  map[int64]*muxWatcher
	early map[int64][]muxMessage // messages of watchers not yet registered
}

type muxWatcher struct {
	w       *watcher
	created func()
}

type muxMessage struct {
	event string
	data  []byte
}

func newStreamMux(s *httpkvServer) *streamMux {
	return &streamMux{s: s, done: make(chan struct{}), byID: map[int64]*muxWatcher{}, early: map[int64][]muxMessage{}}
}

// start makes the stream and starts reading it, once; ctx bounds the
// reading.
func (m *streamMux) start(ctx context.Context) error {
	m.once.Do(func() {
		var made struct {
			Stream string `json:"stream"`
		}
		if m.startErr = m.post(ctx, "/v1/watch/streams", "{}", http.StatusCreated, &made); m.startErr != nil {
			close(m.done)
			return
		}
		m.id = made.Stream
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.s.base+"/v1/watch/streams/"+url.PathEscape(m.id), nil)
		if err == nil {
			req.Header.Set("Accept", "text/event-stream")
		}
		var body io.ReadCloser
		if err == nil {
			body, err = openStream(m.s.watch, req)
		}
		if err != nil {
			m.startErr = err
			close(m.done)
			return
		}
		go func() {
			defer close(m.done)
			defer body.Close()
			m.readErr = m.read(body)
		}()
	})
	return m.startErr
}

// post sends a JSON body and decodes the answer, which must have status
// want.
func (m *streamMux) post(ctx context.Context, path, body string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.s.base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.s.kv.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, out)
}

// Watch adds a watcher of prefix to the stream and counts what it gets
// until ctx is done or the stream ends.
func (m *streamMux) Watch(ctx context.Context, prefix string, from int64, w *watcher, created func()) error {
	if err := m.start(ctx); err != nil {
		return err
	}
	add := map[string]any{"key": prefix, "prefix": true}
	if from > 0 {
		add["start_revision"] = from
	}
	body, err := json.Marshal(add)
	if err != nil {
		return err
	}
	var added struct {
		WatchID int64 `json:"watch_id"`
	}
	if err := m.post(ctx, "/v1/watch/streams/"+url.PathEscape(m.id)+"/watches", string(body), http.StatusCreated, &added); err != nil {
		return err
	}
	mw := &muxWatcher{w: w, created: created}
	m.mu.Lock()
	m.byID[added.WatchID] = mw
	early := m.early[added.WatchID]
	delete(m.early, added.WatchID)
	m.mu.Unlock()
	for _, msg := range early {
		if err := w.deliver([]byte(msg.event), msg.data, created); err != nil {
			return err
		}
	}
	select {
	case <-ctx.Done():
		<-m.done
		return ctx.Err()
	case <-m.done:
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", errStreamEnded, m.readErr)
	}
}

// read hands every message of the stream to its watcher.
func (m *streamMux) read(r io.Reader) error {
	return readSSEMessages(r, func(event, data []byte) error {
		id := watchIDOf(data)
		m.mu.Lock()
		mw := m.byID[id]
		if mw == nil {
			m.early[id] = append(m.early[id], muxMessage{string(event), bytes.Clone(data)})
		}
		m.mu.Unlock()
		if mw == nil {
			return nil
		}
		return mw.w.deliver(event, data, mw.created)
	})
}

var watchIDField = []byte(`"watch_id":`)

// watchIDOf reads the watch_id of a message's data, which comes right
// after its type: scanned, not decoded (see scanEvents).
func watchIDOf(data []byte) int64 {
	i := bytes.Index(data, watchIDField)
	if i < 0 {
		return 0
	}
	rest := data[i+len(watchIDField):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	id, _ := strconv.ParseInt(string(rest[:n]), 10, 64)
	return id
}
