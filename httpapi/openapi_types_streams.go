package httpapi

import "github.com/httpkv/httpkv/wire"

// The wire of streams of many watchers (/v1/watch/streams), for the
// OpenAPI document; see openapi_types.go and openapi_types_watch.go.

// watchRequestDoc is one watch of a stream: the query of GET /v1/watch.
// The handlers decode into it; key-like fields are pointers so that an
// absent key (every key) differs from an empty one.
type watchRequestDoc struct {
	// The key, or the start of the range (or key_base64); none means every key.
	Key       *string `json:"key,omitempty" example:"config/"`
	KeyBase64 *string `json:"key_base64,omitempty" format:"byte"`
	// At most one of range_end, prefix and from_key: [key, range_end), every key with the prefix key (an empty key: every key), every key >= key.
	RangeEnd       *string `json:"range_end,omitempty"`
	RangeEndBase64 *string `json:"range_end_base64,omitempty" format:"byte"`
	Prefix         bool    `json:"prefix,omitempty" example:"true"`
	FromKey        bool    `json:"from_key,omitempty"`
	// Report events from this revision on; 0 or none: from the next one. It may be exactly the compact revision.
	StartRevision int64 `json:"start_revision,omitempty" format:"int64" minimum:"0"`
	// Give each event the key as it was before, in prev_kv.
	PrevKV bool `json:"prev_kv,omitempty"`
	// A comma list of noput and nodelete: leave those events out.
	Filters string `json:"filters,omitempty" example:"nodelete"`
	// Send progress bookmarks while idle.
	ProgressNotify bool `json:"progress_notify,omitempty"`
} // @name WatchRequest

// watchStreamCreateDoc is the body of POST /v1/watch/streams.
type watchStreamCreateDoc struct {
	// The stream's first watches; none or an empty body: a stream without watchers yet.
	Watches []watchRequestDoc `json:"watches,omitempty"`
} // @name WatchStreamCreateRequest

// watchAddedDoc identifies a watcher of a stream.
type watchAddedDoc struct {
	// The watcher's id on its stream: every message of it carries it.
	WatchID int64 `json:"watch_id" format:"int64" minimum:"1" example:"1"`
} // @name WatchAdded

// watchStreamCreatedDoc answers POST /v1/watch/streams.
type watchStreamCreatedDoc struct {
	// The stream's id, for GET /v1/watch/streams/{stream} and the rest.
	Stream string `json:"stream" example:"q3Vb1yW0Xl0m2N5c8Zk4aA"`
	// The watches of the request, in order.
	Watches []watchAddedDoc `json:"watches"`
} // @name WatchStreamCreated

// watchStreamMessageDoc is one message of a stream of many watchers: the
// data of a Server-Sent Event, exactly one of the schemas its fields
// name, told apart by their type (see watchMessageDoc).
type watchStreamMessageDoc struct {
	Created   watchStreamCreatedMsgDoc `json:"created" extensions:"x-variant"`
	Events    watchStreamEventsDoc     `json:"events" extensions:"x-variant"`
	Progress  watchStreamProgressDoc   `json:"progress" extensions:"x-variant"`
	Compacted watchStreamCompactedDoc  `json:"compacted" extensions:"x-variant"`
	Canceled  watchStreamCanceledDoc   `json:"canceled" extensions:"x-variant"`
} // @name WatchStreamMessage

// watchStreamCreatedMsgDoc: a watcher started (SSE event created).
type watchStreamCreatedMsgDoc struct {
	Type string `json:"type" enums:"created"`
	// The watcher.
	WatchID int64 `json:"watch_id" format:"int64" minimum:"1"`
	// The revision the watcher is consistent with: start_revision - 1 for a watch from now, the store's revision otherwise.
	Header wire.ResponseHeader `json:"header"`
	// The first revision the watcher reports.
	StartRevision int64 `json:"start_revision" format:"int64" minimum:"1"`
} // @name WatchStreamCreatedMessage

// watchStreamEventsDoc: one revision's events of a watcher (SSE's default
// event).
type watchStreamEventsDoc struct {
	Type string `json:"type" enums:"events"`
	// The watcher.
	WatchID int64 `json:"watch_id" format:"int64" minimum:"1"`
	// The revision of the events.
	Header wire.ResponseHeader `json:"header"`
	// Every event of that revision that matches the watcher, in order: a txn is never split.
	Events []wire.WatchEvent `json:"events"`
} // @name WatchStreamEvents

// watchStreamProgressDoc: a watcher's bookmark (SSE event progress).
type watchStreamProgressDoc struct {
	Type string `json:"type" enums:"progress"`
	// The watcher.
	WatchID int64 `json:"watch_id" format:"int64" minimum:"1"`
	// Every event of the watcher up to this revision has been sent.
	Header wire.ResponseHeader `json:"header"`
} // @name WatchStreamProgress

// watchStreamCompactedDoc ends a watcher whose history is gone (SSE event
// compacted); the stream goes on.
type watchStreamCompactedDoc struct {
	Type string `json:"type" enums:"compacted"`
	// The watcher, which has ended.
	WatchID int64 `json:"watch_id" format:"int64" minimum:"1"`
	// The store's revision.
	Header wire.ResponseHeader `json:"header"`
	// The compact revision: list again, and add a watch from the list's revision + 1.
	CompactRevision int64 `json:"compact_revision" format:"int64"`
} // @name WatchStreamCompacted

// watchStreamCanceledDoc ends a watcher (SSE event canceled); the stream
// goes on unless every watcher ended with it.
type watchStreamCanceledDoc struct {
	Type string `json:"type" enums:"canceled"`
	// The watcher, which has ended.
	WatchID int64 `json:"watch_id" format:"int64" minimum:"1"`
	// Why: watch deleted, stream deleted, permission denied, cursor too old, shutting down, the backend failed, user deleted, auth enabled: a token is needed, auth disabled.
	Reason string `json:"reason"`
} // @name WatchStreamCanceled
