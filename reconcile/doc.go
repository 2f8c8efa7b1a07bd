// Package reconcile works out what makes a range of keys hold the content
// wanted of it, for an import (the content of a file) and a restore (the
// range's own content at a past revision), so that both backends write
// the same changes and answer the same counts.
//
// Diff walks two sides in key order, the keys as the store holds them and
// the keys as wanted, and reports each key that must change: created,
// updated or, when the content replaces the range, deleted. A key whose
// value is the one wanted is unchanged (its lease is not looked at). A
// side is a Cursor, so that neither has to be in memory whole: a backend
// reads the store's side page by page.
//
// Entries hold an import's content compactly (one buffer for every key
// and value), sorted, each key once, every key in the import's scope;
// Builder makes them from the lines of a file and says which line is
// wrong.
//
// The package knows nothing of HTTP or of a backend: its errors are
// package kv's.
package reconcile
