package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// fakeBackend is a Backend kept in a map, with no history: enough to show
// that the handlers need nothing of a backend but the interface, and what
// they send it and make of its answers. fail, when set, is what every call
// returns.
type fakeBackend struct {
	mu     sync.Mutex
	rev    int64
	keys   map[string]kv.KeyValue
	leases map[int64]int64 // ID -> TTL
	fail   error
	calls  []string
	stream *fakeStream
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{rev: 1, keys: make(map[string]kv.KeyValue), leases: make(map[int64]int64)}
}

// call records a call and returns the error set for every call.
func (f *fakeBackend) call(format string, args ...any) error {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	return f.fail
}

func (f *fakeBackend) Range(_ context.Context, r kv.RangeRequest) (kv.RangeResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Range %q %q rev=%d limit=%d", r.Key, r.End, r.Options.Revision, r.Options.Limit); err != nil {
		return kv.RangeResult{}, err
	}
	sel := keyrange.Range{Key: r.Key, End: r.End}
	res := kv.RangeResult{Revision: f.rev}
	for _, k := range slices.Sorted(maps.Keys(f.keys)) {
		if sel.Contains([]byte(k)) {
			res.KVs = append(res.KVs, f.keys[k])
		}
	}
	res.Count = int64(len(res.KVs))
	return res, nil
}

func (f *fakeBackend) ViewRange(ctx context.Context, r kv.RangeRequest, fn func(*kv.RangeResult) error) error {
	res, err := f.Range(ctx, r)
	if err != nil {
		return err
	}
	return fn(&res)
}

func (f *fakeBackend) Put(_ context.Context, r kv.PutRequest, guard kv.LeaseGuard) (kv.PutResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Put %q=%q lease=%d", r.Key, r.Value, r.Lease); err != nil {
		return kv.PutResult{}, err
	}
	f.rev++
	f.keys[string(r.Key)] = kv.KeyValue{Key: r.Key, Value: r.Value, CreateRevision: f.rev, ModRevision: f.rev, Version: 1, Lease: r.Lease}
	return kv.PutResult{Revision: f.rev}, nil
}

func (f *fakeBackend) Delete(_ context.Context, r kv.DeleteRequest) (kv.DeleteResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Delete %q %q", r.Key, r.End); err != nil {
		return kv.DeleteResult{}, err
	}
	_, ok := f.keys[string(r.Key)]
	if !ok {
		return kv.DeleteResult{Revision: f.rev}, nil
	}
	delete(f.keys, string(r.Key))
	f.rev++
	return kv.DeleteResult{Revision: f.rev, Deleted: 1}, nil
}

func (f *fakeBackend) Txn(_ context.Context, r kv.TxnRequest, _ kv.LeaseGuard) (kv.TxnResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Txn %d compares, %d ops", len(r.Compare), len(r.Success)); err != nil {
		return kv.TxnResult{}, err
	}
	// Compares never hold here: a conditional write answers 412.
	return kv.TxnResult{Revision: f.rev, Succeeded: len(r.Compare) == 0, Responses: []kv.OpResult{{Range: &kv.RangeResult{Revision: f.rev}}}}, nil
}

// Each records the call and gives the keys Range would.
func (f *fakeBackend) Each(ctx context.Context, key, end []byte, rev int64, fn func(*kv.KeyValue) error) (int64, error) {
	res, err := f.Range(ctx, kv.RangeRequest{Key: key, End: end, Options: kv.RangeOptions{Revision: rev}})
	if err != nil {
		return rev, err
	}
	for i := range res.KVs {
		if err := fn(&res.KVs[i]); err != nil {
			return rev, err
		}
	}
	return res.Revision, nil
}

// Rewrite records the call and answers every entry created.
func (f *fakeBackend) Rewrite(_ context.Context, r kv.RewriteRequest) (kv.RewriteResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := -1
	if r.Entries != nil {
		n = r.Entries.Len()
	}
	if err := f.call("Rewrite %q %q entries=%d rev=%d replace=%v dry=%v since=%d", r.Key, r.End, n, r.Revision, r.Replace, r.DryRun, r.UnchangedSince); err != nil {
		return kv.RewriteResult{}, err
	}
	res := kv.RewriteResult{Revision: f.rev}
	for i := range max(n, 0) {
		k, _ := r.Entries.At(i)
		res.Created++
		res.CreatedKeys = append(res.CreatedKeys, k)
	}
	return res, nil
}

func (f *fakeBackend) History(_ context.Context, r kv.HistoryRequest) (kv.HistoryPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("History %q from %d", r.Key, r.StartRevision); err != nil {
		return kv.HistoryPage{}, err
	}
	return kv.HistoryPage{Revision: f.rev, StartRevision: 1, EndRevision: f.rev, Events: []kv.Event{
		{Type: kv.EventDelete, KV: kv.KeyValue{Key: []byte("gone"), ModRevision: f.rev}},
	}}, nil
}

func (f *fakeBackend) Watch(_ context.Context, r kv.WatchRequest) (kv.WatchStream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Watch %q %q from %d", r.Key, r.End, r.StartRevision); err != nil {
		return nil, err
	}
	return f.stream, nil
}

func (f *fakeBackend) Grant(_ context.Context, id, ttl int64) (kv.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Grant %d ttl=%d", id, ttl); err != nil {
		return kv.Lease{}, err
	}
	f.leases[id] = ttl
	return kv.Lease{ID: id, TTL: ttl}, nil
}

func (f *fakeBackend) Revoke(_ context.Context, id int64, _ kv.LeaseGuard) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Revoke %d", id); err != nil {
		return 0, err
	}
	delete(f.leases, id)
	return f.rev, nil
}

func (f *fakeBackend) KeepAlive(_ context.Context, id int64) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leases[id], f.call("KeepAlive %d", id)
}

func (f *fakeBackend) TimeToLive(_ context.Context, id int64, keys bool) (kv.LeaseStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("TimeToLive %d keys=%v", id, keys); err != nil {
		return kv.LeaseStatus{}, err
	}
	return kv.LeaseStatus{ID: id, TTL: 3, GrantedTTL: f.leases[id], Keys: [][]byte{[]byte("held")}}, nil
}

func (f *fakeBackend) LeaseKeys(ctx context.Context, id int64, _ *kv.ReadLimits) (kv.LeaseStatus, error) {
	return f.TimeToLive(ctx, id, true)
}

func (f *fakeBackend) Leases(_ context.Context, after int64, limit int) ([]int64, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]int64, 0, len(f.leases))
	for id := range f.leases {
		if id > after {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	more := len(ids) > limit
	if more {
		ids = ids[:limit]
	}
	return ids, more, f.call("Leases after %d limit %d", after, limit)
}

func (f *fakeBackend) Compact(_ context.Context, rev int64, physical bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.call("Compact %d physical=%v", rev, physical)
}

func (f *fakeBackend) Defrag(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 4096, f.call("Defrag")
}

func (f *fakeBackend) Alarms(context.Context) ([]kv.Alarm, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []kv.Alarm{kv.AlarmNoSpace}, f.call("Alarms")
}

func (f *fakeBackend) DisarmAlarms(context.Context) ([]kv.Alarm, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return nil, f.call("DisarmAlarms")
}

func (f *fakeBackend) Snapshot(context.Context) (kv.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &fakeSnapshot{data: []byte("file and hash")}, f.call("Snapshot")
}

func (f *fakeBackend) Rev() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rev
}

func (f *fakeBackend) Failed() error { return nil }

func (f *fakeBackend) Stats() kv.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return kv.Stats{Revision: f.rev, Leases: len(f.leases), Watchers: kv.WatcherStats{Synced: 2}}
}

func (f *fakeBackend) Status(context.Context) (kv.Status, error) {
	st := f.Stats()
	f.mu.Lock()
	defer f.mu.Unlock()
	return kv.Status{Stats: st, Keys: int64(len(f.keys))}, f.call("Status")
}

func (f *fakeBackend) PageTokenKey() []byte { return []byte("the fake's key") }

// fakeStream hands out the responses it was given, then nothing.
type fakeStream struct {
	mu     sync.Mutex
	rs     []kv.WatchResponse
	ready  chan struct{}
	closed bool
}

func newFakeStream(rs ...kv.WatchResponse) *fakeStream {
	st := &fakeStream{rs: rs, ready: make(chan struct{}, 1)}
	st.ready <- struct{}{}
	return st
}

func (s *fakeStream) StartRevision() int64   { return 5 }
func (s *fakeStream) Revision() int64        { return 4 }
func (s *fakeStream) Ready() <-chan struct{} { return s.ready }
func (s *fakeStream) Release()               {}

func (s *fakeStream) Next() []kv.WatchResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.rs
	s.rs = nil
	return rs
}

func (s *fakeStream) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}

func fakeHandler(f *fakeBackend) *Handler {
	return NewHandler(f, nil, zerolog.Nop(), Config{})
}

// TestHandlersOverFakeBackend drives every kind of handler over a fake
// backend: what a request becomes in the backend's terms, and what its
// answer becomes on the wire.
func TestHandlersOverFakeBackend(t *testing.T) {
	f := newFakeBackend()
	h := fakeHandler(f)
	cases := []struct {
		method, target, body string
		status               int
		call                 string // the backend call the request makes
		body2                string // a fragment of the answer
	}{
		{"PUT", "/v1/kv/a?lease=7", "v1", 200, `Put "a"="v1" lease=7`, `"revision":2`},
		{"GET", "/v1/kv/a", "", 200, `Range "a" "" rev=0 limit=0`, `"value":"v1"`},
		{"GET", "/v1/kv?prefix=true&key=a&limit=5", "", 200, `Range "a" "b" rev=0 limit=5`, `"count":1`},
		{"PUT", "/v1/kv/b", "x", 412, `Txn 1 compares, 1 ops`, `precondition_failed`},
		{"DELETE", "/v1/kv/a", "", 200, `Delete "a" ""`, `"deleted":1`},
		{"POST", "/v1/txn", `{"success":[{"range":{"key":"a"}}]}`, 200, `Txn 0 compares, 1 ops`, `"succeeded":true`},
		{"GET", "/v1/history?key=gone", "", 200, `History "gone" from 0`, `"type":"delete"`},
		{"POST", "/v1/leases", `{"id":7,"ttl":60}`, 201, `Grant 7 ttl=60`, `"ttl":60`},
		{"GET", "/v1/leases", "", 200, `Leases after 0 limit 1000`, `"leases":[{"id":7}],"more":false`},
		{"POST", "/v1/leases/7/keepalive", "", 200, `KeepAlive 7`, `"ttl":60`},
		{"GET", "/v1/leases/7?keys=true", "", 200, `TimeToLive 7 keys=true`, `"keys":["held"]`},
		{"DELETE", "/v1/leases/7", "", 200, `Revoke 7`, `"revision":3`},
		{"POST", "/v1/compact", `{"revision":2,"physical":true}`, 200, `Compact 2 physical=true`, `"header"`},
		{"POST", "/v1/defrag", "", 200, `Defrag`, `"db_size":4096`},
		{"GET", "/v1/alarms", "", 200, `Alarms`, `"alarms":["NOSPACE"]`},
		{"DELETE", "/v1/alarms", "", 200, `DisarmAlarms`, `"alarms":[]`},
		{"GET", "/v1/status", "", 200, `Status`, `"watchers":{"synced":2,"unsynced":0,"victims":0}`},
		{"GET", "/v1/snapshot", "", 200, `Snapshot`, `file and hash`},
	}
	for _, tc := range cases {
		var header []string
		if tc.method == "PUT" && tc.target == "/v1/kv/b" {
			header = []string{"If-Match", `"99"`}
		}
		f.calls = nil
		rec := serve(t, h, tc.method, tc.target, tc.body, header...)
		if rec.Code != tc.status {
			t.Errorf("%s %s = %d %s, want %d", tc.method, tc.target, rec.Code, rec.Body, tc.status)
			continue
		}
		if !slices.Contains(f.calls, tc.call) {
			t.Errorf("%s %s called the backend %q, want %q among them", tc.method, tc.target, f.calls, tc.call)
		}
		if !strings.Contains(rec.Body.String(), tc.body2) {
			t.Errorf("%s %s answered %s, want it to hold %s", tc.method, tc.target, rec.Body, tc.body2)
		}
	}
}

// TestBackendErrorsMapped: the backend's errors reach the client as the
// contract's codes, whichever backend made them.
func TestBackendErrorsMapped(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{&kv.CompactedError{CompactRevision: 7}, http.StatusGone, "compacted"},
		{fmt.Errorf("reading: %w", kv.ErrFutureRevision), http.StatusBadRequest, "future_revision"},
		{kv.ErrKeyNotFound, http.StatusNotFound, "key_not_found"},
		{kv.ErrLeaseNotFound, http.StatusNotFound, "lease_not_found"},
		{kv.ErrLeaseExists, http.StatusConflict, "already_exists"},
		{kv.Invalidf("no"), http.StatusBadRequest, "invalid_argument"},
		{&kv.TooLargeError{MaxBytes: 10}, http.StatusBadRequest, "invalid_argument"},
		{kv.ErrNoSpace, http.StatusInsufficientStorage, "no_space"},
		{kv.ErrClosed, http.StatusServiceUnavailable, "unavailable"},
		{kv.ErrBackendFailed, http.StatusServiceUnavailable, "unavailable"},
		{fmt.Errorf("no quorum: %w", kv.ErrUnavailable), http.StatusServiceUnavailable, "unavailable"},
		{io.ErrUnexpectedEOF, http.StatusInternalServerError, "internal"},
	}
	for _, tc := range cases {
		f := newFakeBackend()
		f.fail = tc.err
		rec := serve(t, fakeHandler(f), "GET", "/v1/kv/a", "")
		if rec.Code != tc.status || errorCode(t, rec) != tc.code {
			t.Errorf("a backend failing with %v: GET /v1/kv/a = %d %s, want %d %s", tc.err, rec.Code, rec.Body, tc.status, tc.code)
		}
		if tc.code == "internal" && !strings.Contains(rec.Body.String(), `"message":"internal error"}`) {
			t.Errorf("an internal failure answered %s, want the message \"internal error\" and nothing of the failure", rec.Body)
		}
		var ce *kv.CompactedError
		if errors.As(tc.err, &ce) && !strings.Contains(rec.Body.String(), `"compact_revision":7`) {
			t.Errorf("compacted answer %s lacks the compact revision", rec.Body)
		}
		// 503 says when to come back.
		if ra := rec.Header().Get("Retry-After"); (tc.status == http.StatusServiceUnavailable) != (ra == "1") {
			t.Errorf("a backend failing with %v: Retry-After %q with %d, want 1 with 503 only", tc.err, ra, rec.Code)
		}
	}
}

// TestWatchOverFakeBackend frames what the backend's stream gives: the
// created message with the stream's revisions, one message per revision,
// and the end of the watch; the stream is closed after.
func TestWatchOverFakeBackend(t *testing.T) {
	f := newFakeBackend()
	f.stream = newFakeStream(
		kv.WatchResponse{Revision: 6, Events: []kv.Event{
			{Type: kv.EventPut, KV: kv.KeyValue{Key: []byte("a"), Value: []byte("1"), ModRevision: 5}},
			{Type: kv.EventDelete, KV: kv.KeyValue{Key: []byte("b"), ModRevision: 6}},
		}},
		kv.WatchResponse{Canceled: true, CancelReason: "upstream gone"},
	)
	rec := serve(t, fakeHandler(f), "GET", "/v1/watch?key=a&range_end=c", "")
	if rec.Code != http.StatusOK || !slices.Contains(f.calls, `Watch "a" "c" from 0`) {
		t.Fatalf("GET /v1/watch = %d, calls %q", rec.Code, f.calls)
	}
	var msgs []sseMessage
	r := newSSEReader(bytes.NewReader(rec.Body.Bytes()))
	for m := range r.msgs {
		if m.Data != "" {
			msgs = append(msgs, m)
		}
		if m.Event == "canceled" {
			break
		}
	}
	var got []string
	for _, m := range msgs {
		// The header and events of any kind, read loosely through the
		// declared events message.
		var d watchEventsDoc
		_ = json.Unmarshal([]byte(m.Data), &d)
		got = append(got, fmt.Sprintf("%s id=%s rev=%d events=%d", m.Event, m.ID, d.Header.Revision, len(d.Events)))
	}
	want := []string{"created id=4 rev=4 events=0", " id=5 rev=5 events=1", " id=6 rev=6 events=1", "canceled id= rev=0 events=0"}
	if !slices.Equal(got, want) {
		t.Errorf("stream %q\nwant %q", got, want)
	}
	if !f.stream.closed {
		t.Error("the handler left the backend's stream open")
	}
}
