// Package stream is what every stream of the API shares, apart from how
// it travels: the one loop that drives a stream (Loop, over a Source and
// a Sink, with a Guard that rechecks the caller's rights), and the
// framing of watch responses as Server-Sent Events or NDJSON (Encoder),
// with the buffers they are encoded into and the encode-once cache of
// recent revisions that streams of one prefix share; and a single watch
// as the loop drives it (Watch).
//
// It knows no HTTP: package sink gives it connections, and httpapi
// decides what streams there are. The streams of many watchers are
// package stream/multi.
package stream
