// Package multi is the engine of the streams of many watchers
// (/v1/watch/streams): a Registry of streams, each carrying many
// watchers read through one connection at a time and resumable as a
// whole after any message it wrote.
//
// A stream's watchers are the backend's watches, started with a Notify
// function rather than a channel each; one collector goroutine per
// stream takes what they have, encodes it (package stream's framing,
// with a watch_id and a cursor on every message), bounds what it holds
// (flow.go, take.go, shared.go) and records each message in a log
// (log.go) so that a client reconnecting with the id of the last
// message it received resumes exactly. Over a backend that is a Store,
// streams are the deployment's records, and any gateway resumes them
// (record.go, store.go, instance.go, cursor.go).
//
// It knows no HTTP: it reaches the backend, the authorizer and the
// bound on watchers through interfaces it declares (Backend, Authority,
// Quota), returns its own errors (errors.go), which httpapi answers, and
// hands each connection to the stream loop as a stream.Source (Conn).
package multi
