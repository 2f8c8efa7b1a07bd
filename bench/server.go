package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// server is what the workloads need of the server under test. httpkv,
// etcd's HTTP gateway and etcd's gRPC API each implement it with their own
// paths and encodings, so that every workload runs unchanged against all.
type server interface {
	// Put writes value at key and returns the revision of the write.
	Put(ctx context.Context, key string, value []byte) (rev int64, err error)
	// Get reads one key.
	Get(ctx context.Context, key string) error
	// Range reads every key under prefix and returns how many it got when
	// count is true; without count it reads the answer but need not
	// decode it.
	Range(ctx context.Context, prefix string, limit int, count bool) (n int, err error)
	// CompareAndPut puts value at key if the key's mod revision is modRev,
	// returning the revision of the txn and whether it succeeded.
	CompareAndPut(ctx context.Context, key string, modRev int64, value []byte) (rev int64, ok bool, err error)
	// Watch streams every change under prefix to w until ctx is done or
	// the stream fails, calling created once the server has confirmed
	// the watch. It starts at revision from, or at the next revision when
	// from is 0.
	Watch(ctx context.Context, prefix string, from int64, w *watcher, created func()) error
	// Close releases the server's connections.
	Close() error
}

// newServer returns the client of cfg.kind.
func newServer(cfg config) (server, error) {
	switch cfg.kind {
	case kindEtcdGRPC:
		return newGRPCServer(cfg)
	case kindEtcd:
		return &etcdServer{base: cfg.target, httpClients: newHTTPClients(cfg)}, nil
	}
	s := &httpkvServer{
		base:        cfg.target,
		httpClients: newHTTPClients(cfg),
		sseClient:   cfg.sseClient,
		maxMessage:  max(1<<16, 2*(cfg.keySize+len(cfg.prefix)+cfg.valueSize)+4096),
	}
	for range cfg.watchStreams {
		s.muxes = append(s.muxes, newStreamMux(s))
	}
	return s, nil
}

// httpClients are the connections of an HTTP server's client: kv for
// requests, one connection per client, and watch for streams, one
// connection per watcher.
type httpClients struct {
	kv, watch *http.Client
}

func newHTTPClients(cfg config) httpClients {
	c := httpClients{kv: &http.Client{Transport: newTransport(cfg.clients)}}
	switch cfg.workload {
	case workloadWatch:
		c.watch = &http.Client{Transport: newTransport(cfg.watchers)}
	case workloadCatchup:
		c.watch = &http.Client{Transport: newTransport(1)}
	}
	return c
}

func (c httpClients) Close() error {
	c.kv.CloseIdleConnections()
	if c.watch != nil {
		c.watch.CloseIdleConnections()
	}
	return nil
}

// newTransport returns a transport for conns connections to one host, all
// kept open between requests, with nothing between the tool and the
// server (no proxy, no compression).
func newTransport(conns int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

// answer holds the fields the tool reads from JSON answers of either
// server. etcd's gateway writes 64-bit numbers as strings and leaves out
// false booleans and zeros.
type answer struct {
	Header struct {
		Revision number `json:"revision"`
	} `json:"header"`
	Succeeded bool   `json:"succeeded"`
	Count     number `json:"count"`
}

// number is a JSON integer, quoted or not.
type number int64

func (n *number) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(string(bytes.Trim(b, `"`)), 10, 64)
	*n = number(v)
	return err
}

// do sends req and returns the body of a 200 answer, read to the end so
// that the connection is reused; decode, when set, receives it.
func do(client *http.Client, req *http.Request, decode *answer) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, bytes.TrimSpace(b))
	}
	if decode == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, decode); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", req.Method, req.URL.Path, err)
	}
	return nil
}
