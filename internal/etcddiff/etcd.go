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

// Wire types of the gateway, named as in etcd's rpc.proto.

type gwHeader struct {
	Revision int64 `json:"revision,string"`
}

type gwKeyValue struct {
	Key            []byte `json:"key"`
	CreateRevision int64  `json:"create_revision,string"`
	ModRevision    int64  `json:"mod_revision,string"`
	Version        int64  `json:"version,string"`
	Value          []byte `json:"value"`
	Lease          int64  `json:"lease,string"`
}

type gwRangeRequest struct {
	Key               []byte `json:"key"`
	RangeEnd          []byte `json:"range_end,omitempty"`
	Limit             int64  `json:"limit,omitempty,string"`
	Revision          int64  `json:"revision,omitempty,string"`
	SortOrder         string `json:"sort_order,omitempty"`
	SortTarget        string `json:"sort_target,omitempty"`
	KeysOnly          bool   `json:"keys_only,omitempty"`
	CountOnly         bool   `json:"count_only,omitempty"`
	MinModRevision    int64  `json:"min_mod_revision,omitempty,string"`
	MaxModRevision    int64  `json:"max_mod_revision,omitempty,string"`
	MinCreateRevision int64  `json:"min_create_revision,omitempty,string"`
	MaxCreateRevision int64  `json:"max_create_revision,omitempty,string"`
}

type gwRangeResponse struct {
	Header gwHeader     `json:"header"`
	KVs    []gwKeyValue `json:"kvs"`
	More   bool         `json:"more"`
	Count  int64        `json:"count,string"`
}

type gwPutRequest struct {
	Key         []byte `json:"key"`
	Value       []byte `json:"value,omitempty"`
	PrevKV      bool   `json:"prev_kv,omitempty"`
	IgnoreValue bool   `json:"ignore_value,omitempty"`
	IgnoreLease bool   `json:"ignore_lease,omitempty"`
}

type gwPutResponse struct {
	Header gwHeader    `json:"header"`
	PrevKV *gwKeyValue `json:"prev_kv"`
}

type gwDeleteRangeRequest struct {
	Key      []byte `json:"key"`
	RangeEnd []byte `json:"range_end,omitempty"`
	PrevKV   bool   `json:"prev_kv,omitempty"`
}

type gwDeleteRangeResponse struct {
	Header  gwHeader     `json:"header"`
	Deleted int64        `json:"deleted,string"`
	PrevKVs []gwKeyValue `json:"prev_kvs"`
}

// gwCompare sets exactly one of the target fields, the one Target names.
type gwCompare struct {
	Result         string `json:"result"`
	Target         string `json:"target"`
	Key            []byte `json:"key"`
	RangeEnd       []byte `json:"range_end,omitempty"`
	Version        *int64 `json:"version,omitempty,string"`
	CreateRevision *int64 `json:"create_revision,omitempty,string"`
	ModRevision    *int64 `json:"mod_revision,omitempty,string"`
	Value          []byte `json:"value,omitempty"`
	Lease          *int64 `json:"lease,omitempty,string"`
}

type gwRequestOp struct {
	RequestRange       *gwRangeRequest       `json:"request_range,omitempty"`
	RequestPut         *gwPutRequest         `json:"request_put,omitempty"`
	RequestDeleteRange *gwDeleteRangeRequest `json:"request_delete_range,omitempty"`
	RequestTxn         *gwTxnRequest         `json:"request_txn,omitempty"`
}

type gwTxnRequest struct {
	Compare []gwCompare   `json:"compare,omitempty"`
	Success []gwRequestOp `json:"success,omitempty"`
	Failure []gwRequestOp `json:"failure,omitempty"`
}

type gwResponseOp struct {
	ResponseRange       *gwRangeResponse       `json:"response_range"`
	ResponsePut         *gwPutResponse         `json:"response_put"`
	ResponseDeleteRange *gwDeleteRangeResponse `json:"response_delete_range"`
	ResponseTxn         *gwTxnResponse         `json:"response_txn"`
}

type gwTxnResponse struct {
	Header    gwHeader       `json:"header"`
	Succeeded bool           `json:"succeeded"`
	Responses []gwResponseOp `json:"responses"`
}

type gwCompactionRequest struct {
	Revision int64 `json:"revision,string"`
}

type gwCompactionResponse struct {
	Header gwHeader `json:"header"`
}

// Enum names, indexed by the store's constants.
var (
	gwSortTargets    = [...]string{kv.SortByKey: "KEY", kv.SortByVersion: "VERSION", kv.SortByCreate: "CREATE", kv.SortByMod: "MOD", kv.SortByValue: "VALUE"}
	gwSortOrders     = [...]string{kv.SortNone: "NONE", kv.SortAscend: "ASCEND", kv.SortDescend: "DESCEND"}
	gwCompareTargets = [...]string{kv.CompareValue: "VALUE", kv.CompareVersion: "VERSION", kv.CompareCreate: "CREATE", kv.CompareMod: "MOD", kv.CompareLease: "LEASE"}
	gwCompareResults = [...]string{kv.CompareEqual: "EQUAL", kv.CompareNotEqual: "NOT_EQUAL", kv.CompareGreater: "GREATER", kv.CompareLess: "LESS"}
)

// Requests: the store's types in the gateway's shape.

func toGwRange(key, end []byte, o kv.RangeOptions) *gwRangeRequest {
	return &gwRangeRequest{
		Key:               key,
		RangeEnd:          end,
		Limit:             o.Limit,
		Revision:          o.Revision,
		SortOrder:         gwSortOrders[o.SortOrder],
		SortTarget:        gwSortTargets[o.SortTarget],
		KeysOnly:          o.KeysOnly,
		CountOnly:         o.CountOnly,
		MinModRevision:    o.MinModRevision,
		MaxModRevision:    o.MaxModRevision,
		MinCreateRevision: o.MinCreateRevision,
		MaxCreateRevision: o.MaxCreateRevision,
	}
}

func toGwPut(r *kv.PutRequest) *gwPutRequest {
	return &gwPutRequest{Key: r.Key, Value: r.Value, PrevKV: r.PrevKV, IgnoreValue: r.IgnoreValue, IgnoreLease: r.IgnoreLease}
}

func toGwDelete(r *kv.DeleteRequest) *gwDeleteRangeRequest {
	return &gwDeleteRangeRequest{Key: r.Key, RangeEnd: r.End, PrevKV: r.PrevKV}
}

func toGwTxn(r *kv.TxnRequest) *gwTxnRequest {
	g := &gwTxnRequest{}
	for _, c := range r.Compare {
		gc := gwCompare{
			Result:   gwCompareResults[c.Result],
			Target:   gwCompareTargets[c.Target],
			Key:      c.Key,
			RangeEnd: c.End,
		}
		n := c.Number
		switch c.Target {
		case kv.CompareValue:
			gc.Value = c.Value
		case kv.CompareVersion:
			gc.Version = &n
		case kv.CompareCreate:
			gc.CreateRevision = &n
		case kv.CompareMod:
			gc.ModRevision = &n
		case kv.CompareLease:
			gc.Lease = &n
		}
		g.Compare = append(g.Compare, gc)
	}
	g.Success = toGwOps(r.Success)
	g.Failure = toGwOps(r.Failure)
	return g
}

func toGwOps(ops []kv.Op) []gwRequestOp {
	var g []gwRequestOp
	for _, op := range ops {
		var o gwRequestOp
		switch {
		case op.Range != nil:
			o.RequestRange = toGwRange(op.Range.Key, op.Range.End, op.Range.Options)
		case op.Put != nil:
			o.RequestPut = toGwPut(op.Put)
		case op.Delete != nil:
			o.RequestDeleteRange = toGwDelete(op.Delete)
		case op.Txn != nil:
			o.RequestTxn = toGwTxn(op.Txn)
		}
		g = append(g, o)
	}
	return g
}

// Responses: the gateway's answers as the store's result types.

func (g *gwKeyValue) toKV() kv.KeyValue {
	return kv.KeyValue{
		Key:            g.Key,
		Value:          g.Value,
		CreateRevision: g.CreateRevision,
		ModRevision:    g.ModRevision,
		Version:        g.Version,
		Lease:          g.Lease,
	}
}

func toKVs(g []gwKeyValue) []kv.KeyValue {
	var kvs []kv.KeyValue
	for i := range g {
		kvs = append(kvs, g[i].toKV())
	}
	return kvs
}

func (g *gwRangeResponse) result() kv.RangeResult {
	return kv.RangeResult{KVs: toKVs(g.KVs), Count: g.Count, More: g.More, Revision: g.Header.Revision}
}

func (g *gwPutResponse) result() kv.PutResult {
	r := kv.PutResult{Revision: g.Header.Revision}
	if g.PrevKV != nil {
		kval := g.PrevKV.toKV()
		r.PrevKV = &kval
	}
	return r
}

func (g *gwDeleteRangeResponse) result() kv.DeleteResult {
	return kv.DeleteResult{Revision: g.Header.Revision, Deleted: g.Deleted, PrevKVs: toKVs(g.PrevKVs)}
}

func (g *gwTxnResponse) result() kv.TxnResult {
	r := kv.TxnResult{Revision: g.Header.Revision, Succeeded: g.Succeeded}
	for _, resp := range g.Responses {
		var out kv.OpResult
		switch {
		case resp.ResponseRange != nil:
			rr := resp.ResponseRange.result()
			out.Range = &rr
		case resp.ResponsePut != nil:
			pr := resp.ResponsePut.result()
			out.Put = &pr
		case resp.ResponseDeleteRange != nil:
			dr := resp.ResponseDeleteRange.result()
			out.Delete = &dr
		case resp.ResponseTxn != nil:
			tr := resp.ResponseTxn.result()
			out.Txn = &tr
		}
		r.Responses = append(r.Responses, out)
	}
	return r
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
