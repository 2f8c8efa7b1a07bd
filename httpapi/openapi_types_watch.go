package httpapi

import "github.com/httpkv/httpkv/wire"

// The messages of a watch stream, for the OpenAPI document (see
// openapi_types.go). Every message's JSON starts with "type", so that a
// client tells them apart by their data alone: an NDJSON reader has
// nothing else, and a generated streaming client hands over only the data
// of each Server-Sent Event, not its event line.

// watchMessageDoc is one message of a watch stream: the data of a
// Server-Sent Event, or one NDJSON line. It is exactly one of the schemas
// its fields name, told apart by their type; the fields marked x-variant
// are not properties, and the OpenAPI 3 document says oneOf instead.
type watchMessageDoc struct {
	Created   watchCreatedDoc   `json:"created" extensions:"x-variant"`
	Events    watchEventsDoc    `json:"events" extensions:"x-variant"`
	Progress  watchProgressDoc  `json:"progress" extensions:"x-variant"`
	Compacted watchCompactedDoc `json:"compacted" extensions:"x-variant"`
	Canceled  watchCanceledDoc  `json:"canceled" extensions:"x-variant"`
} // @name WatchMessage

// watchCreatedDoc opens every watch stream (SSE event created).
type watchCreatedDoc struct {
	Type string `json:"type" enums:"created"`
	// The revision the stream is consistent with: start_revision - 1 for a watch from now, the store's revision otherwise.
	Header wire.ResponseHeader `json:"header"`
	// The first revision the watch reports.
	StartRevision int64 `json:"start_revision" format:"int64" minimum:"1"`
} // @name WatchCreated

// watchEventsDoc carries the events of one revision (SSE's default event,
// whose id is the revision).
type watchEventsDoc struct {
	Type string `json:"type" enums:"events"`
	// The revision of the events.
	Header wire.ResponseHeader `json:"header"`
	// Every event of that revision that matches the watch, in order: a txn is never split.
	Events []wire.WatchEvent `json:"events"`
} // @name WatchEvents

// watchProgressDoc is a bookmark (SSE event progress, whose id is the
// revision).
type watchProgressDoc struct {
	Type string `json:"type" enums:"progress"`
	// Every event up to this revision has been sent.
	Header wire.ResponseHeader `json:"header"`
} // @name WatchProgress

// watchCompactedDoc ends a stream whose history is gone (SSE event
// compacted).
type watchCompactedDoc struct {
	Type string `json:"type" enums:"compacted"`
	// The store's revision.
	Header wire.ResponseHeader `json:"header"`
	// The compact revision: list again, and watch from the list's revision + 1.
	CompactRevision int64 `json:"compact_revision" format:"int64"`
} // @name WatchCompacted

// watchCanceledDoc ends a stream the server cannot go on with (SSE event
// canceled).
type watchCanceledDoc struct {
	Type string `json:"type" enums:"canceled"`
	// Why: shutting down, token expired, token revoked, user deleted, auth disabled, auth enabled: a token is needed, permission denied.
	Reason string `json:"reason"`
} // @name WatchCanceled
