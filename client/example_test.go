package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/httpkv/httpkv/client"
)

// A put, a get, a missing key and a list. httpkvURL is the server's URL,
// such as "http://127.0.0.1:2378".
func Example() {
	ctx := context.Background()
	c, err := client.New(httpkvURL)
	if err != nil {
		log.Fatal(err)
	}
	put, err := c.Put(ctx, "config/db/url", []byte("postgres://db:5432"), client.PutOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("put at revision", put.Header.Revision)

	got, err := c.Get(ctx, "config/db/url", client.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (version %d)\n", got.KV.Value, got.KV.Version)

	_, err = c.Get(ctx, "config/none", client.GetOptions{})
	fmt.Println(client.HasCode(err, client.CodeKeyNotFound), err)

	// Every key under config/, a page at a time, all at one revision.
	for page, err := range c.List(ctx, client.Prefix("config/"), client.ListOptions{}) {
		if err != nil {
			log.Fatal(err)
		}
		for _, kv := range page.KVs {
			fmt.Printf("%s = %s\n", kv.Key, kv.Value)
		}
	}
	// Output:
	// put at revision 2
	// postgres://db:5432 (version 1)
	// true key_not_found: the key "config/none" does not exist
	// config/db/url = postgres://db:5432
}

// A watch from a revision: its history, then each change as it happens.
// It reconnects by itself when the connection drops or the server
// restarts, resuming right after the last revision it yielded; it ends
// when the loop breaks, when ctx ends, or with an error.
func ExampleClient_Watch() {
	ctx := context.Background()
	c, err := client.New(httpkvURL)
	if err != nil {
		log.Fatal(err)
	}
	put, err := c.Put(ctx, "jobs/1", []byte("build"), client.PutOptions{})
	if err != nil {
		log.Fatal(err)
	}
	rev := put.Header.Revision
	for m, err := range c.Watch(ctx, client.Prefix("jobs/"), client.WatchOptions{StartRevision: rev}) {
		if errors.Is(err, client.ErrCompacted) {
			// The history from rev is gone: list again, and watch from
			// the list's revision + 1.
			log.Fatal(err)
		}
		if err != nil {
			log.Fatal(err)
		}
		for _, ev := range m.Events {
			fmt.Println(ev.Type, string(ev.KV.Key), string(ev.KV.Value))
		}
		if m.Type == "events" {
			break // enough for the example
		}
	}
	// Output:
	// put jobs/1 build
}

// Many watchers on one connection: a stream made with two, a third added
// while it runs. Every message names its watcher. When the server has
// forgotten the stream (after a restart), Messages makes it again, each
// watcher from where it was.
func ExampleClient_NewWatchStream() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.New(httpkvURL)
	if err != nil {
		log.Fatal(err)
	}
	ws, ids, err := c.NewWatchStream(ctx, nil,
		client.WatchRequest{Selector: client.Prefix("queue/")},
		client.WatchRequest{Selector: client.Key("leader")})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close(context.Background())
	var third int64
	for m, err := range ws.Messages(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		switch {
		case m.Type == "created" && m.WatchID == ids[1]:
			if third, err = ws.Add(ctx, client.WatchRequest{Selector: client.Key("settings")}); err != nil {
				log.Fatal(err)
			}
		case m.Type == "created" && m.WatchID == third:
			for _, key := range []string{"queue/7", "settings"} {
				if _, err := c.Put(ctx, key, []byte("x"), client.PutOptions{}); err != nil {
					log.Fatal(err)
				}
			}
		case m.Type == "events":
			fmt.Println("watch", m.WatchID, m.Events[0].Type, string(m.Events[0].KV.Key))
		}
		if m.Type == "events" && m.WatchID == third {
			return
		}
	}
	// Output:
	// watch 1 put queue/7
	// watch 3 put settings
}
