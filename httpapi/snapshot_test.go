package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/snapshot"
)

// TestSnapshotServed answers the store's file with its hash appended, its
// length and its revision; the file holds the keys.
func TestSnapshotServed(t *testing.T) {
	h, store := newTestHandler(t, Config{})
	for i := range 50 {
		mustServe(t, h, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/k%02d", i), "v")
	}
	rec := mustServe(t, h, http.StatusOK, "GET", "/v1/snapshot", "")
	body := rec.Body.Bytes()
	if ct := rec.Header().Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("GET /v1/snapshot: Content-Type %q, want application/octet-stream", ct)
	}
	if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Errorf("GET /v1/snapshot: Content-Length %q, body of %d bytes", cl, len(body))
	}
	rev := store.Store().Rev()
	if got := rec.Header().Get("X-Revision"); got != strconv.FormatInt(rev, 10) {
		t.Errorf("GET /v1/snapshot: X-Revision %q, want %d", got, rev)
	}
	c := snapshot.NewChecker()
	c.Write(body)
	if _, err := c.Check(); err != nil {
		t.Fatalf("GET /v1/snapshot: body does not verify: %v", err)
	}
	path := filepath.Join(t.TempDir(), "snap.db")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := snapshot.Examine(path)
	if err != nil || info.Revision != rev || info.Keys != 50 {
		t.Fatalf("Examine(the snapshot) = %+v, %v, want revision %d and 50 keys", info, err, rev)
	}
}

// fakeSnapshot is a backend's snapshot that is not an mvcc store's.
type fakeSnapshot struct {
	data   []byte
	closed bool
}

func (f *fakeSnapshot) Revision() int64 { return 42 }
func (f *fakeSnapshot) Size() int64     { return int64(len(f.data)) }
func (f *fakeSnapshot) Close() error    { f.closed = true; return nil }
func (f *fakeSnapshot) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(f.data)
	return int64(n), err
}

// snapshotBackend is a backend whose snapshots are fake's.
type snapshotBackend struct {
	Backend
	fake *fakeSnapshot
}

func (b snapshotBackend) Snapshot(context.Context) (kv.Snapshot, error) { return b.fake, nil }

// TestSnapshotOtherBackend streams what another backend's Snapshot gives
// (a file and its hash, as etcd's), as it gives it, and closes it.
func TestSnapshotOtherBackend(t *testing.T) {
	file := []byte("another backend's file")
	sum := sha256.Sum256(file)
	fake := &fakeSnapshot{data: append(bytes.Clone(file), sum[:]...)}
	b := storetest.Open(t, embedded.Options{})
	h := NewHandler(snapshotBackend{b, fake}, nil, zerolog.Nop(), Config{})
	rec := mustServe(t, h, http.StatusOK, "GET", "/v1/snapshot", "")
	if !bytes.Equal(rec.Body.Bytes(), fake.data) {
		t.Errorf("GET /v1/snapshot = %q, want the backend's stream %q", rec.Body, fake.data)
	}
	if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(len(fake.data)) {
		t.Errorf("GET /v1/snapshot: Content-Length %q, want the backend's size %d", got, len(fake.data))
	}
	if got := rec.Header().Get("X-Revision"); got != "42" {
		t.Errorf("GET /v1/snapshot: X-Revision %q, want the backend's 42", got)
	}
	if !fake.closed {
		t.Error("GET /v1/snapshot left the backend's snapshot open")
	}
}

// TestSnapshotStalledClient: a client that stops reading is cut off once
// a write has waited SnapshotWriteTimeout, and then holds nothing of the
// store while its connection stays open.
func TestSnapshotStalledClient(t *testing.T) {
	h, store := newTestHandler(t, Config{SnapshotWriteTimeout: 100 * time.Millisecond})
	srv := httptest.NewServer(h)
	defer srv.Close()
	// Larger than what the socket buffers of both ends hold.
	value := bytes.Repeat([]byte("v"), 64<<10)
	for i := 0; ; i++ {
		if size, _ := store.Store().DBSize(); size > 48<<20 {
			break
		}
		if _, err := store.Store().Put(kv.PutRequest{Key: fmt.Appendf(nil, "k%05d", i), Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/snapshot HTTP/1.1\r\nHost: httpkv\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/snapshot = %v, %v, want 200", resp, err)
	}
	// Read nothing more, and keep the connection open.
	for store.Store().Snapshots() > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	// The server goes on serving.
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/after", "v")
}
