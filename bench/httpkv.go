package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
)

// httpkvServer talks to httpkv's /v1 API.
type httpkvServer struct {
	base string
	httpClients
	sseClient  string // sseLines or sseR3labs
	maxMessage int    // the r3labs client's buffer: the largest message
	// muxes, with --watch-streams, carry the watchers, in turn, instead of
	// a single watch each.
	muxes   []*streamMux
	nextMux atomic.Uint64
}

// keyURL is the URL of one key: its bytes percent-escaped as a path, so
// that '/' stays a separator and everything else round-trips.
func (s *httpkvServer) keyURL(key string) string {
	return s.base + (&url.URL{Path: "/v1/kv/" + key}).EscapedPath()
}

func (s *httpkvServer) Put(ctx context.Context, key string, value []byte) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.keyURL(key), bytes.NewReader(value))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	var a answer
	err = do(s.kv, req, &a)
	return int64(a.Header.Revision), err
}

func (s *httpkvServer) Get(ctx context.Context, key string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.keyURL(key), nil)
	if err != nil {
		return err
	}
	return do(s.kv, req, nil)
}

func (s *httpkvServer) Range(ctx context.Context, prefix string, limit int, count bool) (int, error) {
	q := url.Values{"key": {prefix}, "prefix": {"true"}, "limit": {strconv.Itoa(limit)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/v1/kv?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	if !count {
		return 0, do(s.kv, req, nil)
	}
	var a answer
	err = do(s.kv, req, &a)
	return int(a.Count), err
}

func (s *httpkvServer) CompareAndPut(ctx context.Context, key string, modRev int64, value []byte) (int64, bool, error) {
	type cmp struct {
		Key         string `json:"key"`
		Target      string `json:"target"`
		Result      string `json:"result"`
		ModRevision int64  `json:"mod_revision"`
	}
	type put struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	type op struct {
		Put put `json:"put"`
	}
	body, err := json.Marshal(struct {
		Compare []cmp `json:"compare"`
		Success []op  `json:"success"`
	}{
		Compare: []cmp{{Key: key, Target: "mod", Result: "equal", ModRevision: modRev}},
		Success: []op{{Put: put{Key: key, Value: string(value)}}},
	})
	if err != nil {
		return 0, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/v1/txn", bytes.NewReader(body))
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	var a answer
	err = do(s.kv, req, &a)
	return int64(a.Header.Revision), a.Succeeded, err
}

func (s *httpkvServer) Watch(ctx context.Context, prefix string, from int64, w *watcher, created func()) error {
	if len(s.muxes) > 0 {
		return s.muxes[(s.nextMux.Add(1)-1)%uint64(len(s.muxes))].Watch(ctx, prefix, from, w, created)
	}
	q := url.Values{"key": {prefix}, "prefix": {"true"}}
	if from > 0 {
		q.Set("start_revision", strconv.FormatInt(from, 10))
	}
	u := s.base + "/v1/watch?" + q.Encode()
	if s.sseClient == sseR3labs {
		return w.streamR3labs(ctx, u, s.watch, s.maxMessage, created)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	body, err := openStream(s.watch, req)
	if err != nil {
		return err
	}
	defer body.Close()
	return w.readSSE(body, created)
}
