package e2e

import (
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
)

// WatchTimeout bounds the wait for any one watch message: a healthy
// server sends it well within it, even on a loaded machine.
const WatchTimeout = time.Minute

// EventString shows an event for a failure message.
func EventString(e *client.WatchEvent) string {
	s := string(e.Type) + " " + KVString(&e.Kv)
	if e.PrevKv != nil {
		s += " prev " + KVString(e.PrevKv)
	}
	return s
}

// WatcherCount is the number of watchers GET /v1/status reports.
func WatcherCount(tb testing.TB, s *Server) int {
	tb.Helper()
	st := s.Status(tb)
	return int(st.Watchers.Synced + st.Watchers.Unsynced + st.Watchers.Victims)
}
