package bench

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// The null server answers the routes the tool uses of httpkv's API with
// answers of the same shape and size, and stores nothing: it measures what
// an HTTP server on this machine can do at all, the ceiling against which
// httpkv's own costs show. A put only counts a revision and, for the watch
// workload, goes out to the streams watching its key.
const (
	// nullValueSize is the value size of the keys a get or range answers
	// with, the tool's default --value-size.
	nullValueSize = 128
	// nullMaxValue bounds the body of a put.
	nullMaxValue = 1 << 20
	// nullStreamBuffer is how many messages a stream may have waiting;
	// a put to a full stream waits, so writers slow to the watchers' pace.
	nullStreamBuffer = 64
	// nullRangeBodies bounds the cached range answers, one per limit.
	nullRangeBodies = 16
	nullMaxLimit    = 10000
)

// runNull is `httpkv-bench null`: it serves the null server until ctx is
// done.
func runNull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("httpkv-bench null", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:2377", "address to serve on")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if got, err := raiseOpenFiles(1 << 16); err != nil || got < 1<<16 {
		fmt.Fprintf(stderr, "httpkv-bench null: open files limit %d (%v): many watchers may fail\n", got, err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	h := newNullHandler()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "null server on http://%s\n", ln.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	h.Close() // ends the streams, which Shutdown does not wait for
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-served
	return err
}

// nullHandler is the null server.
type nullHandler struct {
	mux  *http.ServeMux
	rev  atomic.Int64
	kv   []byte // the fixed key-value of every answer, as JSON
	stop chan struct{}
	once sync.Once

	mu     sync.RWMutex // guards subs and ranges
	subs   map[*nullStream]struct{}
	ranges map[int][]byte // the kvs array of a range answer, by limit
}

// nullStream is one watch: the messages of puts under its prefix.
type nullStream struct {
	prefix string
	msgs   chan []byte
	done   chan struct{} // closed when the stream's handler returns
}

func newNullHandler() *nullHandler {
	h := &nullHandler{
		mux:    http.NewServeMux(),
		kv:     appendKV(nil, "null/key", []byte(strings.Repeat("x", nullValueSize)), 1),
		stop:   make(chan struct{}),
		subs:   map[*nullStream]struct{}{},
		ranges: map[int][]byte{},
	}
	h.mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, []byte(`{"health":"true"}`))
	})
	h.mux.HandleFunc("GET /v1/kv/{key...}", h.get)
	h.mux.HandleFunc("PUT /v1/kv/{key...}", h.put)
	h.mux.HandleFunc("GET /v1/kv", h.list)
	h.mux.HandleFunc("POST /v1/txn", h.txn)
	h.mux.HandleFunc("GET /v1/watch", h.watch)
	return h
}

func (h *nullHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Close ends every watch stream.
func (h *nullHandler) Close() { h.once.Do(func() { close(h.stop) }) }

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(body)
}

// header opens an answer with its header at revision rev; the caller
// closes the object.
func header(b []byte, rev int64) []byte {
	b = append(b, `{"header":{"revision":`...)
	b = strconv.AppendInt(b, rev, 10)
	return append(b, `}`...)
}

func (h *nullHandler) get(w http.ResponseWriter, _ *http.Request) {
	b := header(make([]byte, 0, 64+len(h.kv)), h.rev.Load())
	b = append(b, `,"kv":`...)
	b = append(b, h.kv...)
	writeJSON(w, append(b, '}'))
}

func (h *nullHandler) list(w http.ResponseWriter, r *http.Request) {
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 || limit > nullMaxLimit {
		limit = 1000
	}
	kvs := h.rangeBody(limit)
	b := header(make([]byte, 0, 64+len(kvs)), h.rev.Load())
	b = append(b, `,"kvs":`...)
	b = append(b, kvs...)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(limit), 10)
	writeJSON(w, append(b, `,"more":false}`...))
}

// rangeBody returns the kvs array of limit keys, made once per limit.
func (h *nullHandler) rangeBody(limit int) []byte {
	h.mu.RLock()
	b := h.ranges[limit]
	h.mu.RUnlock()
	if b != nil {
		return b
	}
	value := []byte(strings.Repeat("x", nullValueSize))
	b = append(b, '[')
	for i := range limit {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKV(b, fmt.Sprintf("null/%06d", i), value, 1)
	}
	b = append(b, ']')
	h.mu.Lock()
	if len(h.ranges) < nullRangeBodies {
		h.ranges[limit] = b
	}
	h.mu.Unlock()
	return b
}

func (h *nullHandler) txn(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, nullMaxValue)); err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	rev := h.rev.Add(1)
	b := header(make([]byte, 0, 128), rev)
	b = append(b, `,"succeeded":true,"responses":[{"put":`...)
	b = header(b, rev)
	writeJSON(w, append(b, `}}]}`...))
}

func (h *nullHandler) put(w http.ResponseWriter, r *http.Request) {
	value, err := io.ReadAll(http.MaxBytesReader(w, r.Body, nullMaxValue))
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	key := r.PathValue("key")
	rev := h.rev.Add(1)
	if err := h.publish(r.Context(), key, value, rev); err != nil {
		return // the writer left
	}
	writeJSON(w, append(header(make([]byte, 0, 32), rev), '}'))
}

// publish sends the event of a put to every stream watching its key,
// waiting for room in each.
func (h *nullHandler) publish(ctx context.Context, key string, value []byte, rev int64) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var msg []byte
	for s := range h.subs {
		if !strings.HasPrefix(key, s.prefix) {
			continue
		}
		if msg == nil {
			msg = appendEventMessage(nil, key, value, rev)
		}
		select {
		case s.msgs <- msg:
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// appendEventMessage appends the SSE message of one put as httpkv writes
// it.
func appendEventMessage(b []byte, key string, value []byte, rev int64) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, rev, 10)
	b = append(b, "\ndata: "...)
	b = header(b, rev)
	b = append(b, `,"events":[{"type":"put","kv":`...)
	b = appendKV(b, key, value, rev)
	return append(b, "}]}\n\n"...)
}

// replay writes one put message for each revision in [from, to], of a
// fixed key and value, as httpkv writes a watcher's history: the null
// server keeps none, so this is what streaming history costs with no
// store behind it.
func replay(w io.Writer, prefix string, from, to int64) error {
	key := prefix + "null"
	value := []byte(strings.Repeat("x", nullValueSize))
	b := make([]byte, 0, 64<<10)
	for rev := from; rev <= to; rev++ {
		b = appendEventMessage(b, key, value, rev)
		if len(b) >= 60<<10 || rev == to {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	return nil
}

// watch streams the puts under the key prefix (every watch is a prefix
// watch here) until the client leaves or the server stops; with a
// start_revision at or below the current one, it first replays the
// revisions since (see replay).
func (h *nullHandler) watch(w http.ResponseWriter, r *http.Request) {
	s := &nullStream{prefix: r.URL.Query().Get("key"), msgs: make(chan []byte, nullStreamBuffer), done: make(chan struct{})}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	defer func() {
		close(s.done) // first: a publisher waiting on this stream moves on
		h.mu.Lock()
		delete(h.subs, s)
		h.mu.Unlock()
	}()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rev := h.rev.Load()
	start := rev + 1
	from, err := strconv.ParseInt(r.URL.Query().Get("start_revision"), 10, 64)
	if err == nil && from > 0 && from <= rev {
		start = from
	}
	b := append([]byte("retry: 1000\n\nevent: created\ndata: "), header(nil, rev)...)
	b = append(b, `,"start_revision":`...)
	b = strconv.AppendInt(b, start, 10)
	b = append(b, "}\n\n"...)
	if _, err := w.Write(b); err != nil {
		return
	}
	if start <= rev && replay(w, s.prefix, start, rev) != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	for {
		select {
		case msg := <-s.msgs:
			if _, err := w.Write(msg); err != nil {
				return
			}
			for n := len(s.msgs); n > 0; n-- { // what else is ready, in one flush
				if _, err := w.Write(<-s.msgs); err != nil {
					return
				}
			}
			if rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-h.stop:
			return
		}
	}
}

// appendKV appends a KeyValue as httpkv writes it.
func appendKV(b []byte, key string, value []byte, rev int64) []byte {
	b = append(b, '{')
	b = appendBytesField(b, "key", []byte(key))
	b = append(b, ',')
	b = appendBytesField(b, "value", value)
	b = append(b, `,"create_revision":`...)
	b = strconv.AppendInt(b, rev, 10)
	b = append(b, `,"mod_revision":`...)
	b = strconv.AppendInt(b, rev, 10)
	return append(b, `,"version":1,"lease":0}`...)
}

// appendBytesField appends "name":"v", or "name_base64":"..." when v is
// not UTF-8, as the API writes keys and values.
func appendBytesField(b []byte, name string, v []byte) []byte {
	b = append(b, '"')
	b = append(b, name...)
	if !utf8.Valid(v) {
		b = append(b, `_base64":"`...)
		b = base64.StdEncoding.AppendEncode(b, v)
		return append(b, '"')
	}
	b = append(b, `":`...)
	return appendJSONString(b, v)
}

// appendJSONString appends s, valid UTF-8, as a JSON string.
func appendJSONString(b []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
