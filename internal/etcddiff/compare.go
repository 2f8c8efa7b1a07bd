package etcddiff

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/httpkv/httpkv/kv"
)

// Target is one side of a comparison: etcd, or a store that answers as
// etcd does. Errors are package kv's sentinels (errors.Is), whatever the
// side's own form of them.
type Target interface {
	Range(key, end []byte, o kv.RangeOptions) (kv.RangeResult, error)
	Put(r kv.PutRequest) (kv.PutResult, error)
	Delete(r kv.DeleteRequest) (kv.DeleteResult, error)
	Txn(r kv.TxnRequest) (kv.TxnResult, error)
	// Compact compacts at rev and returns the revision of the answer's
	// header.
	Compact(rev int64) (int64, error)
}

// Differ sends each step to etcd (Want) and to the store under test
// (Got) and compares the answers: header revision, create and mod
// revision, version, value, count, more, deleted, succeeded, or the kind
// of error.
type Differ struct {
	Want, Got Target
	// Outcomes counts each kind of answer etcd gave, to show what a
	// sequence covered.
	Outcomes map[string]int
}

// Step sends st to both sides, and returns an error saying what differs
// first, with the step and both answers, or nil when they agree.
func (d *Differ) Step(st Step) error {
	var want, got any
	var wantErr, gotErr error
	var diff string
	switch {
	case st.Compact != 0:
		var w, g int64
		w, wantErr = d.Want.Compact(st.Compact)
		g, gotErr = d.Got.Compact(st.Compact)
		want, got = w, g
		if wantErr == nil && gotErr == nil && w != g {
			diff = fmt.Sprintf("revision %d, want %d", g, w)
		}
	case st.Range != nil:
		r := st.Range
		w, we := d.Want.Range(r.Key, r.End, r.Options)
		g, ge := d.Got.Range(r.Key, r.End, r.Options)
		want, got, wantErr, gotErr = w, g, we, ge
		diff = diffRange(&r.Options, &w, &g)
	case st.Put != nil:
		w, we := d.Want.Put(*st.Put)
		g, ge := d.Got.Put(*st.Put)
		want, got, wantErr, gotErr = w, g, we, ge
		diff = diffPut(&w, &g)
	case st.Delete != nil:
		w, we := d.Want.Delete(*st.Delete)
		g, ge := d.Got.Delete(*st.Delete)
		want, got, wantErr, gotErr = w, g, we, ge
		diff = diffDelete(&w, &g)
	case st.Txn != nil:
		w, we := d.Want.Txn(*st.Txn)
		g, ge := d.Got.Txn(*st.Txn)
		want, got, wantErr, gotErr = w, g, we, ge
		diff = diffTxn(st.Txn, &w, &g, false)
	}
	switch {
	case wantErr != nil && (gotErr == nil || !errors.Is(gotErr, wantErr)):
		diff = fmt.Sprintf("error %v, want %v", gotErr, wantErr)
	case wantErr == nil && gotErr != nil:
		diff = fmt.Sprintf("error %v, want none", gotErr)
	case wantErr != nil:
		diff = "" // both failed alike; the results are empty
	}
	if diff != "" {
		return fmt.Errorf("%s\n%s\netcd:  %s\nstore: %s", FormatStep(st), diff, fmtAnswer(want, wantErr), fmtAnswer(got, gotErr))
	}
	if d.Outcomes == nil {
		d.Outcomes = make(map[string]int)
	}
	d.Outcomes[outcome(st, wantErr, want)]++
	return nil
}

// Sweep compares the whole keyspace at every revision from from to to.
func (d *Differ) Sweep(from, to int64) error {
	all := []byte{0}
	for rev := from; rev <= to; rev++ {
		r := &kv.RangeOp{Key: all, End: all, Options: kv.RangeOptions{Revision: rev}}
		if err := d.Step(Step{Op: kv.Op{Range: r}}); err != nil {
			return err
		}
	}
	return nil
}

// outcome names the kind of answer st got, to show what a sequence covered.
func outcome(st Step, err error, res any) string {
	kind := "compact"
	switch {
	case st.Range != nil:
		kind = "range"
	case st.Put != nil:
		kind = "put"
	case st.Delete != nil:
		kind = "delete"
	case st.Txn != nil:
		kind = "txn"
		if tr, ok := res.(kv.TxnResult); ok && err == nil && !tr.Succeeded {
			kind = "txn-failure"
		}
	}
	if err != nil {
		kind += " " + strings.TrimPrefix(err.Error(), "mvcc: ")
	}
	return kind
}

// Comparison. Each diff function returns "" when the store's result got
// matches etcd's want, else what differs first.

func diffKV(want, got *kv.KeyValue) string {
	switch {
	case !bytes.Equal(want.Key, got.Key):
		return fmt.Sprintf("key %q, want %q", got.Key, want.Key)
	case !bytes.Equal(want.Value, got.Value):
		return fmt.Sprintf("%q: value %q, want %q", got.Key, got.Value, want.Value)
	case want.CreateRevision != got.CreateRevision:
		return fmt.Sprintf("%q: create revision %d, want %d", got.Key, got.CreateRevision, want.CreateRevision)
	case want.ModRevision != got.ModRevision:
		return fmt.Sprintf("%q: mod revision %d, want %d", got.Key, got.ModRevision, want.ModRevision)
	case want.Version != got.Version:
		return fmt.Sprintf("%q: version %d, want %d", got.Key, got.Version, want.Version)
	case want.Lease != got.Lease:
		return fmt.Sprintf("%q: lease %d, want %d", got.Key, got.Lease, want.Lease)
	}
	return ""
}

// diffKVList compares kvs in order.
func diffKVList(want, got []kv.KeyValue) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d kvs, want %d", len(got), len(want))
	}
	for i := range want {
		if d := diffKV(&want[i], &got[i]); d != "" {
			return fmt.Sprintf("kvs[%d]: %s", i, d)
		}
	}
	return ""
}

func diffRange(o *kv.RangeOptions, want, got *kv.RangeResult) string {
	switch {
	case want.Revision != got.Revision:
		return fmt.Sprintf("header revision %d, want %d", got.Revision, want.Revision)
	case want.Count != got.Count:
		return fmt.Sprintf("count %d, want %d", got.Count, want.Count)
	case want.More != got.More:
		return fmt.Sprintf("more %v, want %v", got.More, want.More)
	case o.SortTarget == kv.SortByKey:
		return diffKVList(want.KVs, got.KVs) // keys are unique: no ties
	}
	return diffSorted(o.SortTarget, want.More, want.KVs, got.KVs)
}

// diffSorted compares kvs sorted by a field other than the key. etcd's sort
// is not stable, so within a run of equal sort values (a tie) the order of
// the keys is free: the values must match in order and the keys of each tie
// as a set. When the limit cut the last tie short (more), which of its keys
// made it in is free as well, and only the keys both sides returned are
// compared.
func diffSorted(target kv.SortTarget, more bool, want, got []kv.KeyValue) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d kvs, want %d", len(got), len(want))
	}
	for i := range want {
		if w, g := sortField(target, &want[i]), sortField(target, &got[i]); w != g {
			return fmt.Sprintf("kvs[%d]: sort field %q, want %q", i, g, w)
		}
	}
	for i := 0; i < len(want); {
		j := i + 1
		for j < len(want) && sortField(target, &want[j]) == sortField(target, &want[i]) {
			j++
		}
		cut := more && j == len(want)
		tie := make(map[string]*kv.KeyValue, j-i)
		for k := i; k < j; k++ {
			tie[string(got[k].Key)] = &got[k]
		}
		for k := i; k < j; k++ {
			g, ok := tie[string(want[k].Key)]
			if !ok {
				if cut {
					continue
				}
				return fmt.Sprintf("kvs[%d:%d]: %q missing", i, j, want[k].Key)
			}
			if d := diffKV(&want[k], g); d != "" {
				return fmt.Sprintf("kvs[%d:%d]: %s", i, j, d)
			}
		}
		i = j
	}
	return ""
}

func sortField(target kv.SortTarget, kval *kv.KeyValue) string {
	switch target {
	case kv.SortByVersion:
		return strconv.FormatInt(kval.Version, 10)
	case kv.SortByCreate:
		return strconv.FormatInt(kval.CreateRevision, 10)
	case kv.SortByMod:
		return strconv.FormatInt(kval.ModRevision, 10)
	case kv.SortByValue:
		return string(kval.Value)
	}
	return string(kval.Key)
}

func diffPut(want, got *kv.PutResult) string {
	switch {
	case want.Revision != got.Revision:
		return fmt.Sprintf("header revision %d, want %d", got.Revision, want.Revision)
	case (want.PrevKV == nil) != (got.PrevKV == nil):
		return fmt.Sprintf("prev kv %s, want %s", fmtKVPtr(got.PrevKV), fmtKVPtr(want.PrevKV))
	case want.PrevKV != nil:
		if d := diffKV(want.PrevKV, got.PrevKV); d != "" {
			return "prev kv: " + d
		}
	}
	return ""
}

func diffDelete(want, got *kv.DeleteResult) string {
	switch {
	case want.Revision != got.Revision:
		return fmt.Sprintf("header revision %d, want %d", got.Revision, want.Revision)
	case want.Deleted != got.Deleted:
		return fmt.Sprintf("deleted %d, want %d", got.Deleted, want.Deleted)
	}
	if d := diffKVList(want.PrevKVs, got.PrevKVs); d != "" {
		return "prev " + d
	}
	return ""
}

// diffTxn compares txn results op by op along the branch etcd took. A
// nested txn's own revision is not compared: etcd leaves its header empty.
func diffTxn(r *kv.TxnRequest, want, got *kv.TxnResult, nested bool) string {
	switch {
	case !nested && want.Revision != got.Revision:
		return fmt.Sprintf("header revision %d, want %d", got.Revision, want.Revision)
	case want.Succeeded != got.Succeeded:
		return fmt.Sprintf("succeeded %v, want %v", got.Succeeded, want.Succeeded)
	case len(want.Responses) != len(got.Responses):
		return fmt.Sprintf("%d responses, want %d", len(got.Responses), len(want.Responses))
	}
	ops := r.Failure
	if want.Succeeded {
		ops = r.Success
	}
	if len(ops) != len(want.Responses) {
		return fmt.Sprintf("etcd answered %d ops with %d responses", len(ops), len(want.Responses))
	}
	for i, op := range ops {
		w, g := &want.Responses[i], &got.Responses[i]
		var d string
		switch {
		case op.Range != nil && w.Range != nil && g.Range != nil:
			d = diffRange(&op.Range.Options, w.Range, g.Range)
		case op.Put != nil && w.Put != nil && g.Put != nil:
			d = diffPut(w.Put, g.Put)
		case op.Delete != nil && w.Delete != nil && g.Delete != nil:
			d = diffDelete(w.Delete, g.Delete)
		case op.Txn != nil && w.Txn != nil && g.Txn != nil:
			d = diffTxn(op.Txn, w.Txn, g.Txn, true)
		default:
			d = fmt.Sprintf("response %s, want %s", fmtOpResult(g), fmtOpResult(w))
		}
		if d != "" {
			return fmt.Sprintf("responses[%d]: %s", i, d)
		}
	}
	return ""
}
