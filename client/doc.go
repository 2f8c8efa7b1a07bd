// Package client is a Go client of httpkv's HTTP API, written for
// people: keys and values are bytes, every call takes a context, an
// error answer is an *Error with the API's code, and the streams (a
// watch, a stream of many watchers, an election's leadership) are
// iterators that reconnect by themselves and resume where they were,
// without a gap or a duplicate. The httpkv command's data commands are
// built on it, and so are the end-to-end tests.
//
//	c, err := client.New("http://127.0.0.1:2378")
//	put, err := c.Put(ctx, "config/db/url", []byte("postgres://db:5432"), client.PutOptions{})
//	got, err := c.Get(ctx, "config/db/url", client.GetOptions{})
//	fmt.Println(string(got.KV.Value), got.KV.ModRevision)
//
// Lists and histories come a page at a time, and the iterators of
// Client.List and Client.History follow the pages: every page is read at
// the first one's revision. Client.Watch yields one *WatchResponse per
// revision; when the connection drops, or the server restarts, it
// reconnects with Last-Event-ID and goes on right after the last
// revision it yielded. A history that was compacted ends it with a
// *CompactedError (errors.Is(err, ErrCompacted)): list again, and watch
// from the list's revision + 1. Client.NewWatchStream does the same for
// many watchers on one connection (/v1/watch/streams), and makes the
// stream again, each watcher from where it was, when the server has
// forgotten it (after a restart).
//
// With auth enabled, WithToken sends a token, and WithUser logs in
// (POST /v1/auth/token), and logs in again when the token expires.
//
// The generated client of the OpenAPI document (package
// github.com/httpkv/httpkv/openapi/client) covers every operation and
// field as the document states them; this one is smaller, and shaped
// for use.
package client
