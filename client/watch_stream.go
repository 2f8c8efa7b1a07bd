package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
)

// WatchRequest is a watch of a stream of many watchers.
type WatchRequest struct {
	// Selector names the keys watched.
	Selector
	// StartRevision is the first revision to watch; 0 watches from now.
	StartRevision int64
	// PrevKV adds to each event the key as it was before.
	PrevKV bool
	// NoPut and NoDelete leave out puts, or deletes.
	NoPut, NoDelete bool
	// ProgressNotify asks for progress messages while nothing changes.
	ProgressNotify bool
}

// wire is the watch in a request body, starting at start (0: now).
func (w WatchRequest) wire(start int64) any {
	return struct {
		selectorWire
		StartRevision  int64  `json:"start_revision,omitempty"`
		PrevKV         bool   `json:"prev_kv,omitempty"`
		Filters        string `json:"filters,omitempty"`
		ProgressNotify bool   `json:"progress_notify,omitempty"`
	}{w.Selector.wire(), start, w.PrevKV, filters(w.NoPut, w.NoDelete), w.ProgressNotify}
}

// StreamMessage is a message of a stream of many watchers, for one of
// them.
type StreamMessage struct {
	// WatchID is the watcher's ID, as NewWatchStream or Add gave it. It
	// stays the same when the stream is made again.
	WatchID int64
	// WatchResponse is the message, as on a single watch; its Type may
	// also be "compacted" or "canceled", which end the watcher.
	WatchResponse
	// CompactRevision, with compacted, is the store's compact revision.
	CompactRevision int64
	// Reason, with canceled, says why the watcher ended.
	Reason string
}

// WatchStream is a stream of many watchers (/v1/watch/streams): one
// connection for any number of watches, added and canceled while it
// runs. Its methods are safe for concurrent use, but only one loop may
// range over Messages at a time.
type WatchStream struct {
	c       *Client
	onRetry func(error)

	// mu guards what follows. It is held across the calls that change
	// the stream (adding, canceling a watch, making the stream again),
	// so that the reader, which takes it to name the watcher of each
	// message, always knows the watchers those calls made.
	mu       sync.Mutex
	id       string                   // the server's stream; "" when it is to be made again
	cursor   string                   // the id of the last message of stream id handled
	last     int64                    // the last watcher ID given
	watchers map[int64]*streamWatcher // the live watchers, by ID
	byServer map[int64]*streamWatcher // the watchers of stream id, by the server's watch_id
	closed   bool
}

// streamWatcher is a watcher of a WatchStream.
type streamWatcher struct {
	id      int64
	req     WatchRequest
	next    int64 // the revision to resume from; 0 before created
	created bool  // its created message was yielded
}

// start is where the watcher starts when the stream is made again.
func (w *streamWatcher) start() int64 {
	if w.next > 0 {
		return w.next
	}
	return w.req.StartRevision
}

// NewWatchStream makes a stream of many watchers with watches:
// POST /v1/watch/streams. It returns the stream and the IDs of the
// watches, in order. Read it with Messages; Close ends it. onRetry, if
// not nil, hears of every lost connection before a retry.
func (c *Client) NewWatchStream(ctx context.Context, onRetry func(error), watches ...WatchRequest) (*WatchStream, []int64, error) {
	s := &WatchStream{c: c, onRetry: onRetry, watchers: map[int64]*streamWatcher{}}
	ids := make([]int64, len(watches))
	for i, w := range watches {
		s.last++
		ids[i] = s.last
		s.watchers[s.last] = &streamWatcher{id: s.last, req: w}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.create(ctx); err != nil {
		return nil, nil, err
	}
	return s, ids, nil
}

// create makes the stream on the server, with every live watcher from
// where it is. s.mu is held.
func (s *WatchStream) create(ctx context.Context) error {
	live := slices.Sorted(maps.Keys(s.watchers))
	reqs := make([]any, len(live))
	for i, id := range live {
		w := s.watchers[id]
		reqs[i] = w.req.wire(w.start())
	}
	body, err := json.Marshal(struct {
		Watches []any `json:"watches"`
	}{reqs})
	if err != nil {
		return err
	}
	var out struct {
		Stream  string `json:"stream"`
		Watches []struct {
			WatchID int64 `json:"watch_id"`
		} `json:"watches"`
	}
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/v1/watch/streams", body: body, header: jsonHeader()}, &out); err != nil {
		return err
	}
	if len(out.Watches) != len(live) {
		return fmt.Errorf("POST /v1/watch/streams: %d watches asked for, %d made", len(live), len(out.Watches))
	}
	s.id, s.cursor = out.Stream, ""
	s.byServer = make(map[int64]*streamWatcher, len(live))
	for i, id := range live {
		s.byServer[out.Watches[i].WatchID] = s.watchers[id]
	}
	return nil
}

// Add adds a watch to the stream and returns its ID: POST
// /v1/watch/streams/{stream}/watches. Its messages follow on Messages.
func (s *WatchStream) Add(ctx context.Context, req WatchRequest) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errStreamClosed
	}
	w := &streamWatcher{id: s.last + 1, req: req}
	if s.id != "" {
		body, err := json.Marshal(req.wire(req.StartRevision))
		if err != nil {
			return 0, err
		}
		var out struct {
			WatchID int64 `json:"watch_id"`
		}
		_, err = s.c.do(ctx, request{method: http.MethodPost, path: s.path() + "/watches", body: body, header: jsonHeader()}, &out)
		switch {
		case HasCode(err, CodeStreamNotFound):
			s.id = "" // Messages makes it again, with this watch
		case err != nil:
			return 0, err
		default:
			s.byServer[out.WatchID] = w
		}
	}
	s.last++
	s.watchers[w.id] = w
	return w.id, nil
}

// Cancel ends the watch id: DELETE
// /v1/watch/streams/{stream}/watches/{watch_id}. Messages then yields its
// canceled message ("watch deleted"), unless the stream is being made
// again, which leaves it out.
func (s *WatchStream) Cancel(ctx context.Context, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.watchers[id]; !ok {
		return fmt.Errorf("no watch %d on this stream", id)
	}
	delete(s.watchers, id)
	for sid, w := range s.byServer {
		if w.id != id || s.id == "" {
			continue
		}
		_, err := s.c.do(ctx, request{method: http.MethodDelete, path: s.path() + "/watches/" + strconv.FormatInt(sid, 10)}, nil)
		if err != nil && !HasCode(err, CodeStreamNotFound) && !HasCode(err, "watch_not_found") {
			return err
		}
	}
	return nil
}

// Close ends the stream and every watcher: DELETE
// /v1/watch/streams/{stream}. A loop over Messages then ends.
func (s *WatchStream) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.id == "" {
		return nil
	}
	_, err := s.c.do(ctx, request{method: http.MethodDelete, path: s.path()}, nil)
	if HasCode(err, CodeStreamNotFound) {
		return nil
	}
	return err
}

var errStreamClosed = errors.New("the watch stream is closed")

func (s *WatchStream) path() string { return "/v1/watch/streams/" + url.PathEscape(s.id) }

// Messages reads the stream: GET /v1/watch/streams/{stream}. It yields
// every watcher's messages: its created message, then one message per
// revision with events (and progress messages, if asked for). When the
// connection is lost it reconnects with Last-Event-ID; when the server
// has forgotten the stream (it restarted, or nobody read the stream for
// a minute) it makes the stream again, each watcher from the revision
// after the last it yielded: nothing is missed or repeated. A watcher
// whose history is compacted ends with its compacted message and a
// *CompactedError, one that the server ends for good with its canceled
// message and a *CanceledError (but a watch Cancel ended with its
// canceled message alone); the others go on. The loop ends when it
// breaks, when ctx ends (with ctx's error), after Close, or with an
// *Error when the server refuses the stream.
func (s *WatchStream) Messages(ctx context.Context) iter.Seq2[*StreamMessage, error] {
	return func(yield func(*StreamMessage, error) bool) {
		var f *follower
		f = &follower{
			c:       s.c,
			onRetry: s.onRetry,
			open: func(ctx context.Context) (request, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				if s.closed {
					return request{}, errStreamClosed
				}
				if s.id == "" {
					if err := s.create(ctx); err != nil {
						return request{}, err
					}
				}
				f.cursor = s.cursor
				return request{method: http.MethodGet, path: s.path()}, nil
			},
			refused: func(e *Error) bool {
				if e.Code != CodeStreamNotFound {
					return false
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				s.id = ""
				return !s.closed
			},
			handle: func(ev sseEvent) (step, error) {
				m, err := decodeMessage(ev)
				if err != nil {
					return stepStop, err
				}
				msg, st, err := s.take(m, ev)
				if msg == nil || st != stepNext {
					return st, err
				}
				if !yield(msg, err) {
					return stepStop, nil
				}
				return stepNext, nil
			},
		}
		err := f.run(ctx)
		if errors.Is(err, errStreamClosed) {
			return
		}
		if err != nil {
			yield(nil, err)
		}
	}
}

// take updates the watchers with a message of the stream and returns
// what to yield of it (nil for nothing), and with what error.
func (s *WatchStream) take(m *watchMessage, ev sseEvent) (*StreamMessage, step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.hasID {
		s.cursor = ev.id
	}
	if s.closed {
		return nil, stepStop, nil
	}
	w, ok := s.byServer[m.WatchID]
	if !ok || s.watchers[w.id] != w && m.Type != "canceled" {
		return nil, stepNext, nil // a watch of someone else's, or ended
	}
	msg := &StreamMessage{WatchID: w.id, WatchResponse: m.WatchResponse, CompactRevision: m.CompactRevision, Reason: m.Reason}
	switch m.Type {
	case "created":
		w.next = max(w.next, m.StartRevision)
		if w.created {
			return nil, stepNext, nil
		}
		w.created = true
	case "events", "progress":
		w.next = max(w.next, m.Header.Revision+1)
	case "compacted":
		delete(s.watchers, w.id)
		return msg, stepNext, &CompactedError{WatchID: w.id, CompactRevision: m.CompactRevision, Revision: m.Header.Revision}
	case "canceled":
		if m.Reason == "stream deleted" {
			return nil, stepStop, &CanceledError{Reason: m.Reason}
		}
		if resumable(m.Reason) {
			return nil, stepNext, nil // the stream ends next, and is taken up again
		}
		delete(s.watchers, w.id)
		if m.Reason == "watch deleted" {
			return msg, stepNext, nil
		}
		return msg, stepNext, &CanceledError{WatchID: w.id, Reason: m.Reason}
	}
	return msg, stepNext, nil
}
