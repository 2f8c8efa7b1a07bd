package mvcc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/httpkv/httpkv/kv"
)

// TestModel compares the store's answers with the model's as text: one
// line says everything that must match (revisions, values, counts, flags,
// the kind of error), treats nil and empty byte slices alike, and reads
// well in a failure message.

// errorKind names the sentinel err matches, so that the store's errors and
// the model's compare by meaning, not by wording.
func errorKind(err error) string {
	var ce *kv.CompactedError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &ce):
		if !errors.Is(err, kv.ErrCompacted) {
			return "*CompactedError that is not ErrCompacted"
		}
		return fmt.Sprintf("compacted at %d", ce.CompactRevision)
	case errors.Is(err, kv.ErrCompacted):
		return "ErrCompacted without a *CompactedError"
	case errors.Is(err, kv.ErrFutureRevision):
		return "future revision"
	case errors.Is(err, kv.ErrKeyNotFound):
		return "key not found"
	case errors.Is(err, kv.ErrLeaseNotFound):
		return "lease not found"
	case errors.Is(err, kv.ErrDuplicateKey):
		return "duplicate key"
	case errors.Is(err, kv.ErrTooManyOps):
		return "too many ops"
	case errors.Is(err, kv.ErrInvalidArgument):
		return "invalid argument"
	case errors.Is(err, errAbort):
		return "aborted"
	}
	return fmt.Sprintf("unexpected error %q", err)
}

// showAnswer is the text of a result, or of the kind of error instead.
func showAnswer(err error, show func() string) string {
	if err != nil {
		return "error: " + errorKind(err)
	}
	return show()
}

func showKV(kval *kv.KeyValue) string {
	return fmt.Sprintf("%q=%q c%d m%d v%d l%d", kval.Key, kval.Value, kval.CreateRevision, kval.ModRevision, kval.Version, kval.Lease)
}

func showKVs(kvs []kv.KeyValue) string {
	parts := make([]string, len(kvs))
	for i := range kvs {
		parts[i] = showKV(&kvs[i])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func showRangeResult(r *kv.RangeResult) string {
	return fmt.Sprintf("range rev %d count %d more %v %s", r.Revision, r.Count, r.More, showKVs(r.KVs))
}

func showPutResult(r *kv.PutResult) string {
	prev := "none"
	if r.PrevKV != nil {
		prev = showKV(r.PrevKV)
	}
	return fmt.Sprintf("put rev %d prev %s", r.Revision, prev)
}

func showDeleteResult(r *kv.DeleteResult) string {
	return fmt.Sprintf("delete rev %d deleted %d prev %s", r.Revision, r.Deleted, showKVs(r.PrevKVs))
}

func showTxnResult(r *kv.TxnResult) string {
	parts := make([]string, len(r.Responses))
	for i, out := range r.Responses {
		switch {
		case out.Range != nil:
			parts[i] = showRangeResult(out.Range)
		case out.Put != nil:
			parts[i] = showPutResult(out.Put)
		case out.Delete != nil:
			parts[i] = showDeleteResult(out.Delete)
		case out.Txn != nil:
			parts[i] = showTxnResult(out.Txn)
		default:
			parts[i] = "no result"
		}
	}
	return fmt.Sprintf("txn rev %d succeeded %v {%s}", r.Revision, r.Succeeded, strings.Join(parts, "; "))
}

func showEvents(evs []kv.Event) string {
	parts := make([]string, len(evs))
	for i := range evs {
		parts[i] = evs[i].Type.String() + " " + showKV(&evs[i].KV)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func showChanges(c kv.Changes) string {
	return fmt.Sprintf("rev %d events %s", c.Revision, showEvents(c.Events))
}

// Requests, for the failure log.

func showSpan(key, end []byte) string {
	switch {
	case len(end) == 0:
		return fmt.Sprintf("%q", key)
	case len(end) == 1 && end[0] == 0:
		return fmt.Sprintf("%q..", key)
	}
	return fmt.Sprintf("[%q, %q)", key, end)
}

func showPut(r *kv.PutRequest) string {
	s := fmt.Sprintf("Put(%q=%q lease %d", r.Key, r.Value, r.Lease)
	for _, f := range []struct {
		set  bool
		name string
	}{{r.PrevKV, "prev_kv"}, {r.IgnoreValue, "ignore_value"}, {r.IgnoreLease, "ignore_lease"}} {
		if f.set {
			s += " " + f.name
		}
	}
	return s + ")"
}

func showDelete(r *kv.DeleteRequest) string {
	return fmt.Sprintf("DeleteRange(%s prev_kv %v)", showSpan(r.Key, r.End), r.PrevKV)
}

func showRange(key, end []byte, o *kv.RangeOptions) string {
	return fmt.Sprintf("Range(%s %+v)", showSpan(key, end), *o)
}

func showCompare(c *kv.Compare) string {
	target := [...]string{"value", "version", "create", "mod", "lease"}[c.Target]
	result := [...]string{"=", "!=", ">", "<"}[c.Result]
	if c.Target == kv.CompareValue {
		return fmt.Sprintf("%s %s %s %q", showSpan(c.Key, c.End), target, result, c.Value)
	}
	return fmt.Sprintf("%s %s %s %d", showSpan(c.Key, c.End), target, result, c.Number)
}

func showOp(op *kv.Op) string {
	switch {
	case op.Range != nil:
		return showRange(op.Range.Key, op.Range.End, &op.Range.Options)
	case op.Put != nil:
		return showPut(op.Put)
	case op.Delete != nil:
		return showDelete(op.Delete)
	case op.Txn != nil:
		return showTxn(op.Txn)
	}
	return "empty op"
}

func showOps(ops []kv.Op) string {
	parts := make([]string, len(ops))
	for i := range ops {
		parts[i] = showOp(&ops[i])
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func showTxn(r *kv.TxnRequest) string {
	cmps := make([]string, len(r.Compare))
	for i := range r.Compare {
		cmps[i] = showCompare(&r.Compare[i])
	}
	return fmt.Sprintf("Txn(if [%s] then %s else %s)", strings.Join(cmps, ", "), showOps(r.Success), showOps(r.Failure))
}
