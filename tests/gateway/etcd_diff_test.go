package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/etcddiff"
	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// Shape of TestGatewayEtcdDiff: as many seeds as make a history a few
// thousand revisions long, each long enough to compact what it wrote.
const (
	gatewayDiffSeeds = 16
	gatewayDiffSteps = 300
	// gatewayMaxTxnOps is --max-txn-ops of both the gateway and etcd.
	gatewayMaxTxnOps = 128
)

// TestGatewayEtcdDiff runs package etcddiff's seeded random sequences of
// puts, deletes, txns, ranges and compactions through one gateway over a
// three-member cluster and, step by step, against a single etcd member
// (etcd itself, whose every read is at the cluster's revision), and
// fails on the first answer that differs: its header revision included,
// which must be etcd's when the request was served, whichever member the
// gateway asked and whatever it had seen before.
//
// The seeds run one after the other in one gateway and one cluster, so
// that each runs on the history the ones before left (the gateway's
// window, the members' states): each starts by deleting every key and
// compacting on both sides. Both sides take the same writes, so their
// revisions stay equal once aligned at the start.
//
// Requests go through the API's own endpoints: GET /v1/kv (and GET
// /v1/kv/{key} for plain single-key reads), PUT and DELETE, POST /v1/txn
// and POST /v1/compact. A put the path cannot say (the empty key, or a
// value with ignore_value, which the path form ignores) goes as a txn of
// that one put.
//
// It starts five processes and sends several thousand requests, so it
// runs in the etcd pass of the suite (HTTPKV_TEST_BACKEND=etcd) or when
// asked for by name with -run. HTTPKV_DIFF_SEED=N runs the seeds from N
// (the default start is random, and logged).
func TestGatewayEtcdDiff(t *testing.T) {
	if !e2e.OnEtcd(t) && !runAsked("TestGatewayEtcdDiff") {
		t.Skipf("runs with %s=etcd, or alone with -run TestGatewayEtcdDiff", e2e.EnvTestBackend)
	}
	t.Parallel()
	ref := etcddiff.StartEtcd(t)
	c := etcdtest.StartCluster(t, 3)
	// The differential compacts the cluster, which it has to itself.
	gw := &apiTarget{tb: t, s: startGateway(t, c, "/diff/", "--etcd-cluster-maintenance")}
	d := &etcddiff.Differ{Want: ref, Got: gw}
	first := diffFirstSeed(t)
	alignRevisions(t, c, ref, gw)
	for i := range uint64(gatewayDiffSeeds) {
		seed := first + i
		// A fresh keyspace whose history before is compacted: what a
		// sequence reads is its own.
		all := []byte{0}
		reset := []etcddiff.Step{{Op: kv.Op{Delete: &kv.DeleteRequest{Key: all, End: all}}}, {}}
		for j := range reset {
			if j == 1 {
				reset[j].Compact = ref.Rev()
			}
			if err := d.Step(reset[j]); err != nil {
				t.Fatalf("seed %d, reset: %v", seed, err)
			}
		}
		start := ref.Rev()
		gen := etcddiff.NewGen(seed, ref, gatewayMaxTxnOps)
		var recent []string
		for step := range gatewayDiffSteps {
			st := gen.Step()
			if err := d.Step(st); err != nil {
				t.Fatalf("seed %d step %d (replay with HTTPKV_DIFF_SEED=%d): %v\nthe steps before:\n%s", seed, step, first, err, strings.Join(recent, "\n"))
			}
			recent = append(recent, etcddiff.FormatStep(st))
			if len(recent) > 5 {
				recent = recent[1:]
			}
		}
		if err := d.Sweep(max(ref.CompactRev(), start), ref.Rev()); err != nil {
			t.Fatalf("seed %d sweep: %v", seed, err)
		}
	}
	t.Logf("outcomes: %v", d.Outcomes)
	// Its ranges at the current revision came from the read cache.
	if n := gw.s.Metric(t, "httpkv_read_cache_reads_total"); n == 0 {
		t.Fatal("the gateway answered no range from its read cache")
	}
}

// diffFirstSeed returns the first seed of TestGatewayEtcdDiff:
// HTTPKV_DIFF_SEED, or one of the clock's, logged.
func diffFirstSeed(tb testing.TB) uint64 {
	tb.Helper()
	const env = "HTTPKV_DIFF_SEED"
	first := uint64(time.Now().UnixNano()) % 1000000
	if v := os.Getenv(env); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			tb.Fatalf("%s=%q: %v", env, v, err)
		}
		first = n
	}
	tb.Logf("seeds %d to %d (replay with %s=%d)", first, first+gatewayDiffSeeds-1, env, first)
	return first
}

// alignRevisions brings etcd (ref) and the gateway's cluster to one
// revision, and leaves a key in both keyspaces: the side behind takes
// puts, on the cluster outside the gateway's namespace, on ref of the
// key the first put wrote. The reset of each seed then deletes that key
// on both sides, a revision on each.
func alignRevisions(tb testing.TB, c *etcdtest.Cluster, ref *etcddiff.Etcd, gw *apiTarget) {
	tb.Helper()
	put := kv.PutRequest{Key: []byte("align")}
	if _, err := ref.Put(put); err != nil {
		tb.Fatal(err)
	}
	if _, err := gw.Put(put); err != nil {
		tb.Fatal(err)
	}
	cli := c.Client(tb)
	for {
		want, got := ref.Rev(), gw.rev()
		switch {
		case want == got:
			return
		case want > got:
			if _, err := cli.Put(context.Background(), "/align", ""); err != nil {
				tb.Fatal(err)
			}
		default:
			if _, err := ref.Put(put); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// apiTarget is httpkv's API as an etcddiff.Target: each request through
// the endpoint a client would use, each answer back in package kv's
// types, each error as the kv sentinel of its code.
type apiTarget struct {
	tb testing.TB
	s  *e2e.Server
}

// rev reads the server's revision.
func (a *apiTarget) rev() int64 {
	return a.s.Do(a.tb, "GET", "/v1/kv?count_only=true", nil).Want(a.tb, http.StatusOK).Revision(a.tb)
}

func (a *apiTarget) Range(key, end []byte, o kv.RangeOptions) (kv.RangeResult, error) {
	if len(end) == 0 && o == (kv.RangeOptions{Revision: o.Revision}) {
		return a.get(key, o.Revision)
	}
	q := selectorQuery(key, end)
	for _, p := range []struct {
		name string
		n    int64
	}{
		{"revision", o.Revision}, {"limit", o.Limit},
		{"min_mod_revision", o.MinModRevision}, {"max_mod_revision", o.MaxModRevision},
		{"min_create_revision", o.MinCreateRevision}, {"max_create_revision", o.MaxCreateRevision},
	} {
		if p.n != 0 {
			q.Set(p.name, strconv.FormatInt(p.n, 10))
		}
	}
	if o.SortTarget != kv.SortByKey {
		q.Set("sort_target", apiSortTargets[o.SortTarget])
	}
	if o.SortOrder != kv.SortNone {
		q.Set("sort_order", apiSortOrders[o.SortOrder])
	}
	if o.KeysOnly {
		q.Set("keys_only", "true")
	}
	if o.CountOnly {
		q.Set("count_only", "true")
	}
	var res client.ListResponse
	if err := a.call("GET", "/v1/kv?"+q.Encode(), nil, &res); err != nil {
		return kv.RangeResult{}, err
	}
	return kv.RangeResult{KVs: toKVs(res.Kvs), Count: res.Count, More: res.More, Revision: res.Header.Revision}, nil
}

// get reads one key with GET /v1/kv/{key}: a key that does not exist is
// 404 key_not_found, carrying the revision, where etcd answers no key.
func (a *apiTarget) get(key []byte, rev int64) (kv.RangeResult, error) {
	path := e2e.KeyPath(string(key))
	if rev != 0 {
		path += "?revision=" + strconv.FormatInt(rev, 10)
	}
	r := a.s.Do(a.tb, "GET", path, nil)
	if r.Status == http.StatusNotFound {
		var e struct {
			Error struct {
				Code     string `json:"code"`
				Revision int64  `json:"revision"`
			} `json:"error"`
		}
		r.Decode(a.tb, &e)
		if e.Error.Code == "key_not_found" {
			return kv.RangeResult{Revision: e.Error.Revision}, nil
		}
	}
	var res client.GetResponse
	if err := a.answer(r, &res); err != nil {
		return kv.RangeResult{}, err
	}
	return kv.RangeResult{KVs: toKVs([]client.KeyValue{res.Kv}), Count: 1, Revision: res.Header.Revision}, nil
}

func (a *apiTarget) Put(p kv.PutRequest) (kv.PutResult, error) {
	if len(p.Key) == 0 || p.IgnoreValue && len(p.Value) > 0 {
		tr, err := a.Txn(kv.TxnRequest{Success: []kv.Op{{Put: &p}}})
		if err != nil {
			return kv.PutResult{}, err
		}
		return *tr.Responses[0].Put, nil
	}
	q := url.Values{}
	for name, on := range map[string]bool{"prev_kv": p.PrevKV, "ignore_value": p.IgnoreValue, "ignore_lease": p.IgnoreLease} {
		if on {
			q.Set(name, "true")
		}
	}
	var res client.PutResponse
	if err := a.call("PUT", e2e.KeyPath(string(p.Key))+"?"+q.Encode(), p.Value, &res); err != nil {
		return kv.PutResult{}, err
	}
	return toPutResult(&res), nil
}

func (a *apiTarget) Delete(dr kv.DeleteRequest) (kv.DeleteResult, error) {
	q := selectorQuery(dr.Key, dr.End)
	if len(dr.Key) == 0 {
		q.Set("key", "")
	}
	if dr.PrevKV {
		q.Set("prev_kv", "true")
	}
	var res client.DeleteResponse
	if err := a.call("DELETE", "/v1/kv?"+q.Encode(), nil, &res); err != nil {
		return kv.DeleteResult{}, err
	}
	return toDeleteResult(&res), nil
}

func (a *apiTarget) Txn(t kv.TxnRequest) (kv.TxnResult, error) {
	var res client.TxnResponse
	if err := a.call("POST", "/v1/txn", mustJSON(a.tb, toAPITxn(&t)), &res); err != nil {
		return kv.TxnResult{}, err
	}
	return toTxnResult(&res), nil
}

func (a *apiTarget) Compact(rev int64) (int64, error) {
	var res client.HeaderResponse
	if err := a.call("POST", "/v1/compact", mustJSON(a.tb, map[string]int64{"revision": rev}), &res); err != nil {
		return 0, err
	}
	return res.Header.Revision, nil
}

// call sends a request and decodes its answer into v (see answer).
func (a *apiTarget) call(method, path string, body []byte, v any) error {
	a.tb.Helper()
	var header []string
	if method == "POST" {
		header = []string{"Content-Type", "application/json"}
	}
	return a.answer(a.s.Do(a.tb, method, path, body, header...), v)
}

// answer decodes a 200 into v, and returns an error as its kv sentinel.
func (a *apiTarget) answer(r *e2e.Reply, v any) error {
	a.tb.Helper()
	if r.Status == http.StatusOK {
		r.Decode(a.tb, v)
		return nil
	}
	var e client.ErrorResponse
	r.Decode(a.tb, &e)
	return apiError(string(e.Error.Code), e.Error.Message, r.Status)
}

// apiError returns the kv sentinel of an error code, the most precise
// one its message names; one the comparison does not know comes back as
// itself and fails it.
func apiError(code, message string, status int) error {
	switch code {
	case "compacted":
		return kv.ErrCompacted
	case "future_revision":
		return kv.ErrFutureRevision
	case "key_not_found":
		return kv.ErrKeyNotFound
	case "invalid_argument":
		switch {
		case strings.Contains(message, " twice"):
			return fmt.Errorf("%w: %s", kv.ErrDuplicateKey, message)
		case strings.Contains(message, "--max-txn-ops"):
			return fmt.Errorf("%w: %s", kv.ErrTooManyOps, message)
		}
		return fmt.Errorf("%w: %s", kv.ErrInvalidArgument, message)
	}
	return fmt.Errorf("HTTP %d %s: %s", status, code, message)
}

// selectorQuery names [key, end) in a query, in base64 (any bytes).
func selectorQuery(key, end []byte) url.Values {
	q := url.Values{}
	if len(key) > 0 {
		q.Set("key_base64", b64(key))
	}
	if len(end) > 0 {
		q.Set("range_end_base64", b64(end))
	}
	return q
}

var (
	apiSortTargets = [...]string{kv.SortByKey: "key", kv.SortByVersion: "version", kv.SortByCreate: "create", kv.SortByMod: "mod", kv.SortByValue: "value"}
	apiSortOrders  = [...]string{kv.SortNone: "none", kv.SortAscend: "ascend", kv.SortDescend: "descend"}
	apiTargets     = [...]string{kv.CompareValue: "value", kv.CompareVersion: "version", kv.CompareCreate: "create", kv.CompareMod: "mod", kv.CompareLease: "lease"}
	apiResults     = [...]string{kv.CompareEqual: "equal", kv.CompareNotEqual: "not_equal", kv.CompareGreater: "greater", kv.CompareLess: "less"}
)

// toAPITxn is a txn as POST /v1/txn takes it.
func toAPITxn(t *kv.TxnRequest) *client.TxnRequest {
	cmps := make([]client.Compare, len(t.Compare))
	for i, c := range t.Compare {
		ac := client.Compare{
			KeyBase64: bytesField(c.Key),
			Target:    client.CompareTarget(apiTargets[c.Target]), Result: client.CompareResult(apiResults[c.Result]),
		}
		if len(c.End) > 0 {
			ac.RangeEndBase64 = bytesField(c.End)
		}
		n := c.Number
		switch c.Target {
		case kv.CompareValue:
			ac.ValueBase64 = bytesField(c.Value)
		case kv.CompareVersion:
			ac.Version = &n
		case kv.CompareCreate:
			ac.CreateRevision = &n
		case kv.CompareMod:
			ac.ModRevision = &n
		case kv.CompareLease:
			ac.Lease = &n
		}
		cmps[i] = ac
	}
	return &client.TxnRequest{Compare: &cmps, Success: toAPIOps(t.Success), Failure: toAPIOps(t.Failure)}
}

func toAPIOps(ops []kv.Op) *[]client.RequestOp {
	out := make([]client.RequestOp, len(ops))
	for i, op := range ops {
		switch {
		case op.Range != nil:
			o := op.Range.Options
			r := &client.RangeOp{KeyBase64: bytesField(op.Range.Key), Revision: &o.Revision, Limit: &o.Limit,
				KeysOnly: &o.KeysOnly, CountOnly: &o.CountOnly,
				MinModRevision: &o.MinModRevision, MaxModRevision: &o.MaxModRevision,
				MinCreateRevision: &o.MinCreateRevision, MaxCreateRevision: &o.MaxCreateRevision,
				SortTarget: e2e.Ptr(client.RangeOpSortTarget(apiSortTargets[o.SortTarget])),
				SortOrder:  e2e.Ptr(client.RangeOpSortOrder(apiSortOrders[o.SortOrder])),
			}
			if len(op.Range.End) > 0 {
				r.RangeEndBase64 = bytesField(op.Range.End)
			}
			out[i].Range = r
		case op.Put != nil:
			p := op.Put
			out[i].Put = &client.PutOp{KeyBase64: bytesField(p.Key), ValueBase64: bytesField(p.Value),
				PrevKv: &p.PrevKV, IgnoreValue: &p.IgnoreValue, IgnoreLease: &p.IgnoreLease}
		case op.Delete != nil:
			d := &client.DeleteOp{KeyBase64: bytesField(op.Delete.Key), PrevKv: &op.Delete.PrevKV}
			if len(op.Delete.End) > 0 {
				d.RangeEndBase64 = bytesField(op.Delete.End)
			}
			out[i].Delete = d
		case op.Txn != nil:
			out[i].Txn = toAPITxn(op.Txn)
		}
	}
	return &out
}

// Answers in package kv's types.

func toKVs(kvs []client.KeyValue) []kv.KeyValue {
	out := make([]kv.KeyValue, len(kvs))
	for i := range kvs {
		k := &kvs[i]
		out[i] = kv.KeyValue{Key: []byte(e2e.KeyOf(k)), Value: []byte(e2e.ValueOf(k)),
			CreateRevision: k.CreateRevision, ModRevision: k.ModRevision, Version: k.Version, Lease: k.Lease}
	}
	return out
}

func toPutResult(r *client.PutResponse) kv.PutResult {
	res := kv.PutResult{Revision: r.Header.Revision}
	if r.PrevKv != nil {
		res.PrevKV = &toKVs([]client.KeyValue{*r.PrevKv})[0]
	}
	return res
}

func toDeleteResult(r *client.DeleteResponse) kv.DeleteResult {
	res := kv.DeleteResult{Revision: r.Header.Revision, Deleted: r.Deleted}
	if r.PrevKvs != nil {
		res.PrevKVs = toKVs(*r.PrevKvs)
	}
	return res
}

func toTxnResult(r *client.TxnResponse) kv.TxnResult {
	res := kv.TxnResult{Revision: r.Header.Revision, Succeeded: r.Succeeded, Responses: make([]kv.OpResult, len(r.Responses))}
	for i, op := range r.Responses {
		out := &res.Responses[i]
		switch {
		case op.Range != nil:
			out.Range = &kv.RangeResult{KVs: toKVs(op.Range.Kvs), Count: op.Range.Count, More: op.Range.More, Revision: op.Range.Header.Revision}
		case op.Put != nil:
			pr := toPutResult(op.Put)
			out.Put = &pr
		case op.Delete != nil:
			dr := toDeleteResult(op.Delete)
			out.Delete = &dr
		case op.Txn != nil:
			tr := toTxnResult(op.Txn)
			out.Txn = &tr
		}
	}
	return res
}

// bytesField is b as a *_base64 field: "" for no bytes, never null.
func bytesField(b []byte) *[]byte {
	if b == nil {
		b = []byte{}
	}
	return &b
}

// b64 is standard base64, as the API's *_base64 fields take it.
func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// mustJSON encodes v.
func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("encoding %T: %v", v, err)
	}
	return b
}
