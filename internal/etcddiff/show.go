package etcddiff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/httpkv/httpkv/kv"
)

// Requests and answers as text, for failure messages.

// FormatStep shows a step, for failure messages.
func FormatStep(st Step) string {
	if st.Compact != 0 {
		return fmt.Sprintf("compact %d", st.Compact)
	}
	return fmtOp(&st.Op)
}

func fmtOp(op *kv.Op) string {
	switch {
	case op.Range != nil:
		return "range " + fmtRange(op.Range)
	case op.Put != nil:
		p := op.Put
		s := fmt.Sprintf("put %q=%q", p.Key, p.Value)
		return s + fmtFlags(flag{"prev_kv", p.PrevKV}, flag{"ignore_value", p.IgnoreValue}, flag{"ignore_lease", p.IgnoreLease})
	case op.Delete != nil:
		return "delete " + fmtKeys(op.Delete.Key, op.Delete.End) + fmtFlags(flag{"prev_kv", op.Delete.PrevKV})
	case op.Txn != nil:
		return fmtTxn(op.Txn)
	}
	return "empty op"
}

func fmtRange(r *kv.RangeOp) string {
	o := r.Options
	s := fmtKeys(r.Key, r.End)
	for _, f := range []struct {
		name string
		n    int64
	}{
		{"rev", o.Revision}, {"limit", o.Limit},
		{"min_mod", o.MinModRevision}, {"max_mod", o.MaxModRevision},
		{"min_create", o.MinCreateRevision}, {"max_create", o.MaxCreateRevision},
	} {
		if f.n != 0 {
			s += fmt.Sprintf(" %s=%d", f.name, f.n)
		}
	}
	if o.SortOrder != kv.SortNone || o.SortTarget != kv.SortByKey {
		s += fmt.Sprintf(" sort=%s/%s", gwSortTargets[o.SortTarget], gwSortOrders[o.SortOrder])
	}
	return s + fmtFlags(flag{"keys_only", o.KeysOnly}, flag{"count_only", o.CountOnly})
}

func fmtKeys(key, end []byte) string {
	switch {
	case len(end) == 0:
		return strconv.Quote(string(key))
	case len(end) == 1 && end[0] == 0:
		return fmt.Sprintf("[%q, ∞)", key)
	}
	return fmt.Sprintf("[%q, %q)", key, end)
}

// flag is a boolean option of a request, shown by name when set.
type flag struct {
	name string
	on   bool
}

func fmtFlags(flags ...flag) string {
	var s string
	for _, f := range flags {
		if f.on {
			s += " " + f.name
		}
	}
	return s
}

func fmtTxn(r *kv.TxnRequest) string {
	var b strings.Builder
	b.WriteString("txn{if")
	for _, c := range r.Compare {
		target := gwCompareTargets[c.Target]
		arg := strconv.FormatInt(c.Number, 10)
		if c.Target == kv.CompareValue {
			arg = strconv.Quote(string(c.Value))
		}
		fmt.Fprintf(&b, " %s(%s) %s %s;", strings.ToLower(target), fmtKeys(c.Key, c.End), gwCompareResults[c.Result], arg)
	}
	for _, branch := range []struct {
		name string
		ops  []kv.Op
	}{{"then", r.Success}, {"else", r.Failure}} {
		fmt.Fprintf(&b, " %s", branch.name)
		if len(branch.ops) > 8 {
			fmt.Fprintf(&b, " %d ops;", len(branch.ops))
			continue
		}
		for i := range branch.ops {
			fmt.Fprintf(&b, " %s;", fmtOp(&branch.ops[i]))
		}
	}
	b.WriteString("}")
	return b.String()
}

func fmtKV(kval *kv.KeyValue) string {
	return fmt.Sprintf("%q=%q(c%d m%d v%d)", kval.Key, kval.Value, kval.CreateRevision, kval.ModRevision, kval.Version)
}

func fmtKVPtr(kval *kv.KeyValue) string {
	if kval == nil {
		return "none"
	}
	return fmtKV(kval)
}

func fmtKVs(kvs []kv.KeyValue) string {
	parts := make([]string, len(kvs))
	for i := range kvs {
		parts[i] = fmtKV(&kvs[i])
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func fmtAnswer(res any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	switch r := res.(type) {
	case kv.RangeResult:
		return fmtRangeResult(&r)
	case kv.PutResult:
		return fmtOpResult(&kv.OpResult{Put: &r})
	case kv.DeleteResult:
		return fmtOpResult(&kv.OpResult{Delete: &r})
	case kv.TxnResult:
		return fmtOpResult(&kv.OpResult{Txn: &r})
	}
	return fmt.Sprintf("rev %v", res)
}

func fmtRangeResult(r *kv.RangeResult) string {
	return fmt.Sprintf("rev %d count %d more %v %s", r.Revision, r.Count, r.More, fmtKVs(r.KVs))
}

func fmtOpResult(r *kv.OpResult) string {
	switch {
	case r.Range != nil:
		return "range: " + fmtRangeResult(r.Range)
	case r.Put != nil:
		return fmt.Sprintf("put: rev %d prev %s", r.Put.Revision, fmtKVPtr(r.Put.PrevKV))
	case r.Delete != nil:
		return fmt.Sprintf("delete: rev %d deleted %d prev %s", r.Delete.Revision, r.Delete.Deleted, fmtKVs(r.Delete.PrevKVs))
	case r.Txn != nil:
		parts := make([]string, len(r.Txn.Responses))
		for i := range r.Txn.Responses {
			parts[i] = fmtOpResult(&r.Txn.Responses[i])
		}
		return fmt.Sprintf("txn: rev %d succeeded %v {%s}", r.Txn.Revision, r.Txn.Succeeded, strings.Join(parts, "; "))
	}
	return "nothing"
}
