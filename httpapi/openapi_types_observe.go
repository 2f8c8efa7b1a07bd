package httpapi

import "github.com/httpkv/httpkv/wire"

// The messages of an election's observe stream, for the OpenAPI document
// (see wire/types.go): a leader, no leader, or the ends a watch stream
// has too.

// observeMessageDoc is one message of an observe stream: the data of a
// Server-Sent Event, or one NDJSON line. It is exactly one of the schemas
// its fields name, told apart by their type (see watchMessageDoc).
type observeMessageDoc struct {
	Leader    observeLeaderDoc   `json:"leader" extensions:"x-variant"`
	NoLeader  observeNoLeaderDoc `json:"no_leader" extensions:"x-variant"`
	Compacted watchCompactedDoc  `json:"compacted" extensions:"x-variant"`
	Canceled  watchCanceledDoc   `json:"canceled" extensions:"x-variant"`
} // @name ObserveMessage

// observeLeaderDoc names the leader from a revision on (SSE's default
// event, whose id is the revision).
type observeLeaderDoc struct {
	Type string `json:"type" enums:"leader"`
	// The revision of the change: a new leader, or the leader proclaiming a value.
	Header wire.ResponseHeader `json:"header"`
	// The leader's key and value from header.revision on.
	KV wire.KeyValue `json:"kv"`
} // @name ObserveLeader

// observeNoLeaderDoc says the office is empty from a revision on (SSE
// event no_leader, whose id is the revision).
type observeNoLeaderDoc struct {
	Type string `json:"type" enums:"no_leader"`
	// The revision from which no one leads.
	Header wire.ResponseHeader `json:"header"`
} // @name ObserveNoLeader
