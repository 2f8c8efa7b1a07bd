package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/httpkv/httpkv/openapi/client"
)

// A put, a get and a list of a prefix. httpkvURL is the server's URL,
// such as "http://127.0.0.1:2378". Each answer carries the decoded body of
// its status: JSON200 for a 200, JSON404 for a 404...
func Example() {
	ctx := context.Background()
	kv, err := client.NewClientWithResponses(httpkvURL)
	if err != nil {
		log.Fatal(err)
	}

	// A put's body is the value, byte for byte.
	put, err := kv.PutKeyWithBodyWithResponse(ctx, "config/db/url", nil, "application/octet-stream", strings.NewReader("postgres://db:5432"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("put at revision", put.JSON200.Header.Revision)

	res, err := kv.GetKeyWithResponse(ctx, "config/db/url", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(*res.JSON200.Kv.Value)

	missing, err := kv.GetKeyWithResponse(ctx, "config/none", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(missing.StatusCode(), missing.JSON404.Error.Code)

	key, prefix := "config/", true
	list, err := kv.ListKeysWithResponse(ctx, &client.ListKeysParams{Key: &key, Prefix: &prefix})
	if err != nil {
		log.Fatal(err)
	}
	for _, item := range list.JSON200.Kvs {
		fmt.Println(*item.Key, "=", *item.Value)
	}
	// Output:
	// put at revision 2
	// postgres://db:5432
	// 404 key_not_found
	// config/db/url = postgres://db:5432
}

// A watch of a prefix, read as NDJSON: one WatchMessage a line, which its
// type says the kind of. The first is created; here the example then
// writes, and reads the events of that write.
func ExampleClient_Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the watch
	c, err := client.NewClient(httpkvURL)
	if err != nil {
		log.Fatal(err)
	}
	key, prefix, ndjson := "jobs/", true, "application/x-ndjson"
	resp, err := c.Watch(ctx, &client.WatchParams{Key: &key, Prefix: &prefix, Accept: &ndjson})
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()

	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		var m client.WatchMessage
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			log.Fatal(err)
		}
		msg, err := m.ValueByDiscriminator()
		if err != nil {
			log.Fatal(err)
		}
		switch msg := msg.(type) {
		case client.WatchCreated:
			fmt.Println("watching")
			put, err := c.PutKeyWithBody(ctx, "jobs/1", nil, "application/octet-stream", strings.NewReader("build"))
			if err != nil {
				log.Fatal(err)
			}
			put.Body.Close()
		case client.WatchEvents:
			for _, ev := range msg.Events {
				fmt.Println(ev.Type, *ev.Kv.Key, *ev.Kv.Value)
			}
			return
		}
	}
	log.Fatal("the watch ended: ", lines.Err())
	// Output:
	// watching
	// put jobs/1 build
}

// Many watchers on one stream: a stream is created with two watches, read
// as Server-Sent Events (every message's data is a WatchStreamMessage
// naming its watcher), and given a third watch while it runs. Each
// message's id is a cursor: a client that reconnects sends the last one
// it received as Last-Event-ID.
func ExampleClient_ReadWatchStream() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the connection
	c, err := client.NewClientWithResponses(httpkvURL)
	if err != nil {
		log.Fatal(err)
	}
	jobs, prefix, leader := "jobs/", true, "leader"
	created, err := c.CreateWatchStreamWithResponse(ctx, client.WatchStreamCreateRequest{
		Watches: &[]client.WatchRequest{{Key: &jobs, Prefix: &prefix}, {Key: &leader}},
	})
	if err != nil || created.JSON201 == nil {
		log.Fatal(err, created.Status())
	}
	stream := created.JSON201.Stream
	// Deleting the stream ends it at once; left alone, it would be
	// dropped a minute after its last connection.
	defer c.DeleteWatchStreamWithResponse(context.Background(), stream)
	resp, err := c.ReadWatchStream(ctx, stream, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()

	put := func(key, value string) {
		r, err := c.PutKeyWithBody(ctx, key, nil, "application/octet-stream", strings.NewReader(value))
		if err != nil {
			log.Fatal(err)
		}
		r.Body.Close()
	}
	lines := bufio.NewScanner(resp.Body)
	var cursor string
	for lines.Scan() {
		line := lines.Text()
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			cursor = id // send it as Last-Event-ID to resume
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var m client.WatchStreamMessage
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			log.Fatal(err)
		}
		msg, err := m.ValueByDiscriminator()
		if err != nil {
			log.Fatal(err)
		}
		switch msg := msg.(type) {
		case client.WatchStreamCreatedMessage:
			fmt.Println("watch", msg.WatchId, "created")
			switch msg.WatchId {
			case 2:
				key := "config/db"
				added, err := c.AddStreamWatchWithResponse(ctx, stream, client.WatchRequest{Key: &key})
				if err != nil || added.JSON201 == nil {
					log.Fatal(err, added.Status())
				}
			case 3:
				put("jobs/1", "build")
				put("config/db", "postgres")
			}
		case client.WatchStreamEvents:
			for _, ev := range msg.Events {
				fmt.Println("watch", msg.WatchId, ev.Type, *ev.Kv.Key, *ev.Kv.Value)
			}
			if msg.WatchId == 3 {
				if cursor == "" {
					log.Fatal("a message without an id")
				}
				return
			}
		}
	}
	log.Fatal("the stream ended: ", lines.Err())
	// Output:
	// watch 1 created
	// watch 2 created
	// watch 3 created
	// watch 1 put jobs/1 build
	// watch 3 put config/db postgres
}
