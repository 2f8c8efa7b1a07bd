package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
)

// WatchOptions are the options of Client.Watch.
type WatchOptions struct {
	// StartRevision is the first revision to watch; 0 watches from now.
	StartRevision int64
	// PrevKV adds to each event the key as it was before.
	PrevKV bool
	// NoPut and NoDelete leave out puts, or deletes.
	NoPut, NoDelete bool
	// ProgressNotify asks for progress messages while nothing changes.
	ProgressNotify bool
	// OnRetry, if set, is called with the cause whenever the connection
	// is lost and the watch is about to reconnect.
	OnRetry func(error)
}

// WatchResponse is a message of a watch.
type WatchResponse struct {
	// Type is "created" (the first message, saying where the watch
	// starts), "events" (the events of one revision) or "progress" (a
	// bookmark: every event up to Header.Revision has been sent).
	Type   string `json:"type"`
	Header Header `json:"header"`
	// StartRevision, with created, is the first revision watched.
	StartRevision int64 `json:"start_revision,omitempty"`
	// Events, with events, are every event of one revision that the
	// watch matches, in order.
	Events []Event `json:"events,omitempty"`
	// Revision is the revision of the events, or of the progress.
	Revision int64 `json:"-"`
	// Raw is the message's data as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// watchMessage is any message of a watch, a stream of many watchers or
// an observation, as the server sends it.
type watchMessage struct {
	WatchResponse
	WatchID         int64     `json:"watch_id"`
	CompactRevision int64     `json:"compact_revision"`
	Reason          string    `json:"reason"`
	KV              *KeyValue `json:"kv"`
}

// decodeMessage reads the data of a message.
func decodeMessage(ev sseEvent) (*watchMessage, error) {
	var m watchMessage
	if err := json.Unmarshal(ev.data, &m); err != nil || m.Type == "" {
		return nil, fmt.Errorf("a message of the stream is not JSON with a type (%v): %.200q", err, ev.data)
	}
	m.Raw = json.RawMessage(ev.data)
	m.Revision = m.Header.Revision
	return &m, nil
}

// resumable reports whether a canceled stream is one the server takes
// back: it shut down, or its token expired (WithUser logs in again).
// The others (permission denied, a deleted user or watch) are final.
func resumable(reason string) bool {
	switch reason {
	case "permission denied", "user deleted", "watch deleted", "stream deleted":
		return false
	}
	return true
}

// ending is the step after a message that ends a single stream: a
// compaction ends it with a *CompactedError, a cancellation with a
// *CanceledError, unless the server takes the stream back.
func ending(m *watchMessage) (step, error) {
	if m.Type == "compacted" {
		return stepStop, &CompactedError{CompactRevision: m.CompactRevision, Revision: m.Header.Revision}
	}
	if resumable(m.Reason) {
		return stepReconnect, nil
	}
	return stepStop, &CanceledError{Reason: m.Reason}
}

// Watch watches a key or a range: GET /v1/watch, as Server-Sent Events.
// It yields the created message, then one message per revision with
// events (and progress messages, if asked for). When the connection is
// lost, or the server restarts, it reconnects with Last-Event-ID and
// goes on right after the last revision it yielded: nothing is missed
// or repeated (the reconnection's own created message is not yielded).
// It ends when the loop breaks, or with an error: ctx's when it ends,
// a *CompactedError when the history it needs is compacted, a
// *CanceledError when the server ends the watch for good, or an *Error
// when the server refuses it.
func (c *Client) Watch(ctx context.Context, sel Selector, o WatchOptions) iter.Seq2[*WatchResponse, error] {
	return func(yield func(*WatchResponse, error) bool) {
		q := url.Values{}
		sel.addQuery(q)
		setInt(q, "start_revision", o.StartRevision)
		setBool(q, "prev_kv", o.PrevKV)
		setBool(q, "progress_notify", o.ProgressNotify)
		if f := filters(o.NoPut, o.NoDelete); f != "" {
			q.Set("filters", f)
		}
		created := false
		f := &follower{
			c:       c,
			onRetry: o.OnRetry,
			open: func(context.Context) (request, error) {
				return request{method: http.MethodGet, path: "/v1/watch", query: q}, nil
			},
			handle: func(ev sseEvent) (step, error) {
				m, err := decodeMessage(ev)
				if err != nil {
					return stepStop, err
				}
				switch m.Type {
				case "created":
					if created {
						return stepNext, nil
					}
					created = true
				case "compacted", "canceled":
					return ending(m)
				}
				if !yield(&m.WatchResponse, nil) {
					return stepStop, nil
				}
				return stepNext, nil
			},
		}
		if err := f.run(ctx); err != nil {
			yield(nil, err)
		}
	}
}
