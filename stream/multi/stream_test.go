package multi

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/kv"
)

// TestDeliveryLogCheck: how cursors resolve against the log. Messages 1
// to 3 were folded (confirmed, or old), 4 and 5 taken back when a client
// resumed after 3, and 6 to 9 issued since, 6 to 8 of them written.
func TestDeliveryLogCheck(t *testing.T) {
	l := deliveryLog{folded: 3, first: 6, written: 8, issued: 9}
	for i := 6; i <= 9; i++ {
		l.entries = append(l.entries, logEntry{})
	}
	for _, tt := range []struct {
		cursor int64
		want   cursorState
	}{
		{0, cursorTooOld},
		{2, cursorTooOld},
		{3, cursorOK},      // the fold point
		{4, cursorTooOld},  // taken back
		{5, cursorTooOld},  // taken back
		{6, cursorOK},      // written
		{8, cursorOK},      // the last written
		{9, cursorUnknown}, // issued, never written
		{1000, cursorUnknown},
	} {
		if got := l.check(tt.cursor); got != tt.want {
			t.Errorf("check(%d) with folded 3, first 6, written 8 = %d, want %d", tt.cursor, got, tt.want)
		}
	}
	fresh := deliveryLog{first: 1}
	if got := fresh.check(0); got != cursorOK {
		t.Errorf("check(0) of a fresh log = %d, want OK", got)
	}
}

// TestWatchStreamExpiry: a stream is dropped once it has had no
// connection for IdleTimeout: never read, or no longer; while read it
// stays.
func TestWatchStreamExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := storetest.Open(t, embedded.Options{})
		reg := New(Config{IdleTimeout: time.Minute}, b, nil, nil)
		defer reg.Close()
		never, _ := reg.Create(Owner{}, "test", nil)
		read, _ := reg.Create(Owner{}, "test", nil)
		c, err := read.attach(0, false)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute - time.Second)
		synctest.Wait()
		if reg.Get(never.id) == nil {
			t.Fatal("a stream never read was dropped before IdleTimeout")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if reg.Get(never.id) != nil {
			t.Fatal("a stream never read is there after IdleTimeout")
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if reg.Get(read.id) == nil {
			t.Fatal("a stream being read was dropped")
		}
		read.detach(c)
		// A reconnect within the timeout starts it again.
		time.Sleep(time.Minute - time.Second)
		c, err = read.attach(0, false)
		if err != nil {
			t.Fatal(err)
		}
		read.detach(c)
		time.Sleep(time.Minute - time.Second)
		synctest.Wait()
		if reg.Get(read.id) == nil {
			t.Fatal("a stream was dropped less than IdleTimeout after its last connection")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if reg.Get(read.id) != nil || reg.Len() != 0 {
			t.Fatal("a stream left without a connection is there after IdleTimeout")
		}
	})
}

// TestWatchStreamFlow: past BufferBytes, ready watchers wait (deferred)
// while the reader takes, are parked once it has taken nothing for
// stallAfter, and are watched again, and get everything, once it takes
// again.
func TestWatchStreamFlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := storetest.Open(t, embedded.Options{})
		reg := New(Config{BufferBytes: 1}, b, nil, nil)
		defer reg.Close()
		ms, _ := reg.Create(Owner{}, "test", nil)
		for range 3 {
			if _, err := ms.AddWatch(kv.WatchRequest{Key: []byte("f/"), End: []byte("f0")}); err != nil {
				t.Fatal(err)
			}
		}
		c, err := ms.attach(0, false)
		if err != nil {
			t.Fatal(err)
		}
		taken := 0
		take := func() {
			sb, _ := ms.takePending(c)
			if sb != nil {
				taken += strings.Count(string(sb.out), `"type":"events"`)
				ms.recycle(sb)
			}
			ms.wrote(c)
		}
		take() // the created messages
		state := func() (deferred, parked int) {
			ms.mu.Lock()
			defer ms.mu.Unlock()
			return len(ms.flow.deferred), len(ms.flow.parked)
		}
		if _, err := b.Put(context.Background(), kv.PutRequest{Key: []byte("f/1"), Value: []byte("v")}, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		// One watcher's message fills pending; the others wait.
		if d, p := state(); d != 2 || p != 0 {
			t.Fatalf("pending full, the reader taking: %d deferred and %d parked, want 2 and 0", d, p)
		}
		time.Sleep(stallAfter)
		synctest.Wait()
		if d, p := state(); d != 0 || p != 2 {
			t.Fatalf("the reader stalled for %v: %d deferred and %d parked, want 0 and 2", stallAfter, d, p)
		}
		for range 10 {
			take()
			synctest.Wait()
		}
		if d, p := state(); taken != 3 || d != 0 || p != 0 {
			t.Fatalf("the reader took again: %d events taken, %d deferred, %d parked; want 3, 0, 0", taken, d, p)
		}
	})
}
