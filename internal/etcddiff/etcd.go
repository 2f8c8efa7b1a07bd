package etcddiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// Etcd is one etcd member spoken to through its HTTP/JSON gRPC gateway,
// as a Target: bytes fields travel as base64, int64 fields as JSON
// strings, enums by name, and a failed call answers {"error": ...,
// "message": ..., "code": <grpc code>}. A transport failure fails the
// test.
type Etcd struct {
	tb     testing.TB
	url    string
	client *http.Client
	// compacted is the newest revision compacted through Compact: etcd
	// tells no compact revision but in a watch.
	compacted int64
}

// StartEtcd starts a single-member etcd (the release internal/etcdtest
// pins) for the test, stopped on cleanup, and returns it as a Target.
// A single member is the reference: it answers every read at its own,
// which is the cluster's, revision. Without an etcd binary it skips the
// test, or fails it when CI is set.
func StartEtcd(tb testing.TB) *Etcd {
	tb.Helper()
	c := etcdtest.StartCluster(tb, 1)
	return &Etcd{tb: tb, url: c.Member(0).ClientURL, client: &http.Client{Timeout: 10 * time.Second}}
}

// etcdErrors maps the messages of the gRPC errors the sequences can
// provoke to the sentinel the store returns for them.
var etcdErrors = []struct {
	message string
	err     error
}{
	{"etcdserver: mvcc: required revision has been compacted", kv.ErrCompacted},
	{"etcdserver: mvcc: required revision is a future revision", kv.ErrFutureRevision},
	{"etcdserver: duplicate key given in txn request", kv.ErrDuplicateKey},
	{"etcdserver: too many operations in txn request", kv.ErrTooManyOps},
	{"etcdserver: key not found", kv.ErrKeyNotFound},
	{"etcdserver: key is not provided", kv.ErrInvalidArgument},
	{"etcdserver: value is provided", kv.ErrInvalidArgument},
	{"etcdserver: lease is provided", kv.ErrInvalidArgument},
}

// gwError is the body of a failed gateway call.
type gwError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	Code    int    `json:"code"`
}

// call posts req to the gateway at path and decodes the answer into resp.
// A gRPC error comes back as the matching sentinel; one the test does not
// know comes back as itself and fails the comparison. Transport failures
// fail the test.
func (e *Etcd) call(path string, req, resp any) error {
	tb := e.tb
	tb.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		tb.Fatalf("encode %s request: %v", path, err)
	}
	r, err := e.client.Post(e.url+path, "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("POST %s: %v", path, err)
	}
	defer r.Body.Close()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		tb.Fatalf("POST %s: read answer: %v", path, err)
	}
	var ge gwError
	if err := json.Unmarshal(raw, &ge); err != nil {
		tb.Fatalf("POST %s: decode %q: %v", path, raw, err)
	}
	if ge.Message != "" || ge.Error != "" || r.StatusCode != http.StatusOK {
		for _, m := range etcdErrors {
			if ge.Message == m.message {
				return m.err
			}
		}
		return fmt.Errorf("unrecognized etcd error (HTTP %d): %s", r.StatusCode, strings.TrimSpace(string(raw)))
	}
	if err := json.Unmarshal(raw, resp); err != nil {
		tb.Fatalf("POST %s: decode %s: %v", path, raw, err)
	}
	return nil
}

// The store's operations, served by etcd.

// Range reads [key, end).
func (e *Etcd) Range(key, end []byte, o kv.RangeOptions) (kv.RangeResult, error) {
	var resp gwRangeResponse
	if err := e.call("/v3/kv/range", toGwRange(key, end, o), &resp); err != nil {
		return kv.RangeResult{}, err
	}
	return resp.result(), nil
}

// Put writes a key.
func (e *Etcd) Put(r kv.PutRequest) (kv.PutResult, error) {
	var resp gwPutResponse
	if err := e.call("/v3/kv/put", toGwPut(&r), &resp); err != nil {
		return kv.PutResult{}, err
	}
	return resp.result(), nil
}

// Delete deletes a key or a range.
func (e *Etcd) Delete(r kv.DeleteRequest) (kv.DeleteResult, error) {
	var resp gwDeleteRangeResponse
	if err := e.call("/v3/kv/deleterange", toGwDelete(&r), &resp); err != nil {
		return kv.DeleteResult{}, err
	}
	return resp.result(), nil
}

// Txn runs a txn.
func (e *Etcd) Txn(r kv.TxnRequest) (kv.TxnResult, error) {
	var resp gwTxnResponse
	if err := e.call("/v3/kv/txn", toGwTxn(&r), &resp); err != nil {
		return kv.TxnResult{}, err
	}
	return resp.result(), nil
}

// Compact compacts at rev and returns the revision of the answer's header.
func (e *Etcd) Compact(rev int64) (int64, error) {
	var resp gwCompactionResponse
	if err := e.call("/v3/kv/compaction", gwCompactionRequest{Revision: rev}, &resp); err != nil {
		return 0, err
	}
	e.compacted = max(e.compacted, rev)
	return resp.Header.Revision, nil
}

// Etcd as the State of a Gen.

// Rev reads etcd's current revision.
func (e *Etcd) Rev() int64 {
	e.tb.Helper()
	all := []byte{0}
	res, err := e.Range(all, all, kv.RangeOptions{CountOnly: true})
	if err != nil {
		e.tb.Fatalf("etcd's revision: %v", err)
	}
	return res.Revision
}

// CompactRev is the newest revision compacted through Compact: the
// sequences are the only client that compacts.
func (e *Etcd) CompactRev() int64 { return e.compacted }

// Get reads key's current version.
func (e *Etcd) Get(key []byte) (kv.KeyValue, bool) {
	e.tb.Helper()
	res, err := e.Range(key, nil, kv.RangeOptions{})
	if err != nil {
		e.tb.Fatalf("etcd's %q: %v", key, err)
	}
	if len(res.KVs) != 1 {
		return kv.KeyValue{}, false
	}
	return res.KVs[0], true
}
