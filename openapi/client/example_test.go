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
