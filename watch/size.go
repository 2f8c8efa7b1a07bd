package watch

import "github.com/httpkv/httpkv/kv"

// EventSize is what the scheduler counts an event as holding against a
// watcher's bound in bytes: its key and value bytes (and its previous
// version's) and a fixed overhead. A backend that holds events for the
// scheduler (a gateway's window of recent revisions) counts them the
// same way.
func EventSize(ev *kv.Event) int64 { return eventSize(ev) }
