package etcddiff

import "github.com/httpkv/httpkv/kv"

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
