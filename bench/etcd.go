package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/httpkv/httpkv/keyrange"
)

// etcdServer talks to etcd's HTTP/JSON gateway (/v3/...), where
// keys and values are base64 in JSON ([]byte fields) and 64-bit numbers
// are strings.
type etcdServer struct {
	base string
	httpClients
}

func (s *etcdServer) post(ctx context.Context, path string, body any, decode *answer) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return do(s.kv, req, decode)
}

// etcdKV is a key and value as the gateway takes them: encoding/json
// writes []byte as base64.
type etcdKV struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value,omitempty"`
}

// etcdRange is a RangeRequest.
type etcdRange struct {
	Key      []byte `json:"key"`
	RangeEnd []byte `json:"range_end,omitempty"`
	Limit    int    `json:"limit,omitempty"`
}

func (s *etcdServer) Put(ctx context.Context, key string, value []byte) (int64, error) {
	var a answer
	err := s.post(ctx, "/v3/kv/put", etcdKV{Key: []byte(key), Value: value}, &a)
	return int64(a.Header.Revision), err
}

func (s *etcdServer) Get(ctx context.Context, key string) error {
	return s.post(ctx, "/v3/kv/range", etcdRange{Key: []byte(key)}, nil)
}

func (s *etcdServer) Range(ctx context.Context, prefix string, limit int, count bool) (int, error) {
	r := etcdRange{Key: []byte(prefix), RangeEnd: keyrange.PrefixEnd([]byte(prefix)), Limit: limit}
	if !count {
		return 0, s.post(ctx, "/v3/kv/range", r, nil)
	}
	var a answer
	err := s.post(ctx, "/v3/kv/range", r, &a)
	return int(a.Count), err
}

func (s *etcdServer) CompareAndPut(ctx context.Context, key string, modRev int64, value []byte) (int64, bool, error) {
	type cmp struct {
		Key         []byte `json:"key"`
		Target      string `json:"target"`
		Result      string `json:"result"`
		ModRevision string `json:"mod_revision"`
	}
	type op struct {
		Put etcdKV `json:"request_put"`
	}
	var a answer
	err := s.post(ctx, "/v3/kv/txn", struct {
		Compare []cmp `json:"compare"`
		Success []op  `json:"success"`
	}{
		Compare: []cmp{{Key: []byte(key), Target: "MOD", Result: "EQUAL", ModRevision: strconv.FormatInt(modRev, 10)}},
		Success: []op{{Put: etcdKV{Key: []byte(key), Value: value}}},
	}, &a)
	return int64(a.Header.Revision), a.Succeeded, err
}

func (s *etcdServer) Watch(ctx context.Context, prefix string, from int64, w *watcher, created func()) error {
	type create struct {
		Key           []byte `json:"key"`
		RangeEnd      []byte `json:"range_end"`
		StartRevision int64  `json:"start_revision,omitempty,string"`
	}
	b, err := json.Marshal(struct {
		Create create `json:"create_request"`
	}{create{Key: []byte(prefix), RangeEnd: keyrange.PrefixEnd([]byte(prefix)), StartRevision: from}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/v3/watch", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	body, err := openStream(s.watch, req)
	if err != nil {
		return err
	}
	defer body.Close()
	return w.readNDJSON(body, created)
}
