package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	kvclient "github.com/httpkv/httpkv/client"
)

// The Go watch helpers of package client, against the real binary: a
// watch, and a stream of many watchers, deliver an exact history across
// a kill -9 and a restart of the server mid-stream.

// watchValue is large enough that the history a watch replays does not
// fit in the connection's buffers: the kill cuts it mid-stream.
var watchValue = strings.Repeat("v", 2048)

// NewKVClient is a client of package client for s.
func NewKVClient(tb testing.TB, s *Server) *kvclient.Client {
	tb.Helper()
	c, err := kvclient.New(s.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// PutEvents puts prefix<from>..prefix<from+n-1> and returns the events
// a watch of them delivers, "rev type key" each.
func PutEvents(tb testing.TB, c *kvclient.Client, prefix string, from, n int) []string {
	tb.Helper()
	var want []string
	for i := from; i < from+n; i++ {
		key := fmt.Sprintf("%s%04d", prefix, i)
		put, err := c.Put(context.Background(), key, []byte(watchValue), kvclient.PutOptions{})
		if err != nil {
			tb.Fatalf("put %s: %v", key, err)
		}
		want = append(want, fmt.Sprintf("%d put %s", put.Header.Revision, key))
	}
	return want
}

func SameHistory(tb testing.TB, what string, got, want []string) {
	tb.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		tb.Fatalf("%s delivered %d events, want %d:\ngot  %q\nwant %q", what, len(got), len(want), got, want)
	}
}
