package mvcc

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestEtcdDiff runs seeded random sequences of puts, deletes, txns,
// compactions and ranges against a real etcd and against a Store, and fails
// on the first answer that differs: header revision, create and mod
// revision, version, value, count, more, deleted, succeeded, or the kind of
// error. Each seed gets a fresh etcd and a fresh store, so the revisions of
// both line up; rerun one with -run 'TestEtcdDiff/seed=N'.
//
// What the sequences leave out, and why:
//
//   - Leases: every put has lease 0 (lease compares are against 0).
//   - etcd's duplicate-key check reads a delete with range end "\x00" as an
//     empty interval, so it accepts a put of a key that delete removes; the
//     store rejects it. Such deletes are used in txns only when the txn has
//     no put at all. Likewise txn deletes never have an end at or below
//     their key, which etcd's interval tree was not written for.
//   - etcd answers a nested txn with an empty header; the store reports a
//     revision there, which is not compared.
//   - On a fresh etcd the compact revision is -1, so compacting at 0
//     succeeds once; the store's starts at 0. Compactions here are at 1 or
//     above.
//   - Negative limits and revisions, which etcd reads as 0 and the store
//     rejects as invalid, are not generated.
//   - etcd sorts with an unstable sort, so ties in the sort field may come
//     back in any order; those results are compared as the sequence of
//     sort-field values and the set of keys of each tie.
//
// The etcd is the release internal/etcdtest pins (3.6). etcd 3.4 and 3.5
// checked a write txn's puts (ignore_value and ignore_lease on missing
// keys) on its whole path before its ranges (compacted or future
// revisions); 3.6 and the store check op by op, so a txn here may get both
// kinds of failing op, and an older etcd fails some seeds (14, 30 and 37
// of the first 40 on 3.4).
//
// A tombstone at exactly the compact revision is kept by the store for
// watchers and dropped by etcd; ranges cannot tell, so nothing is left out
// for it.
func TestEtcdDiff(t *testing.T) {
	const steps = 400
	// Seeds 14 and 37 make txns with both kinds of failing op (above).
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6, 14, 37} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			etcd := startEtcd(t)
			s, err := Open(filepath.Join(t.TempDir(), "db"), nil, nil, Options{NoFsync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			d := &differ{t: t, seed: seed, etcd: etcd, s: s, gen: newDiffGen(seed, s)}
			for step := range steps {
				d.step(step, d.gen.step())
			}
			d.sweep(steps)
			t.Logf("outcomes: %v", d.outcomes)
		})
	}
}

// diffStep is one request of a sequence: an Op, or a compaction when
// Compact is set.
type diffStep struct {
	kv.Op
	Compact int64
}

// differ sends each step to etcd and to the store and compares the answers.
type differ struct {
	t        *testing.T
	seed     uint64
	etcd     *etcdServer
	s        *Store
	gen      *diffGen
	outcomes map[string]int // how often each kind of answer came, for the log
}

func (d *differ) step(i int, st diffStep) {
	t := d.t
	t.Helper()
	var want, got any
	var wantErr, gotErr error
	var diff string
	switch {
	case st.Compact != 0:
		var wantRev int64
		wantRev, wantErr = d.etcd.Compact(t, st.Compact)
		var done <-chan error
		done, gotErr = d.s.Compact(st.Compact)
		if gotErr == nil {
			if err := <-done; err != nil {
				t.Fatalf("seed %d step %d: Compact(%d) finished with %v", d.seed, i, st.Compact, err)
			}
		}
		want, got = wantRev, d.s.Rev()
		if wantErr == nil && gotErr == nil && wantRev != d.s.Rev() {
			diff = fmt.Sprintf("revision %d, want %d", d.s.Rev(), wantRev)
		}
	case st.Range != nil:
		r := st.Range
		w, we := d.etcd.Range(t, r.Key, r.End, r.Options)
		g, ge := d.s.Range(r.Key, r.End, r.Options)
		want, got, wantErr, gotErr = w, g, we, ge
		diff = diffRange(&r.Options, &w, &g)
	case st.Put != nil:
		w, we := d.etcd.Put(t, *st.Put)
		g, ge := d.s.Put(*st.Put)
		want, got, wantErr, gotErr = w, g, we, ge
		diff = diffPut(&w, &g)
	case st.Delete != nil:
		w, we := d.etcd.DeleteRange(t, *st.Delete)
		g, ge := d.s.DeleteRange(*st.Delete)
		want, got, wantErr, gotErr = w, g, we, ge
		diff = diffDelete(&w, &g)
	case st.Txn != nil:
		w, we := d.etcd.Txn(t, *st.Txn)
		g, ge := d.s.Txn(*st.Txn)
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
		t.Fatalf("seed %d step %d: %s\n%s\netcd:  %s\nstore: %s",
			d.seed, i, fmtStep(st), diff, fmtAnswer(want, wantErr), fmtAnswer(got, gotErr))
	}
	if d.outcomes == nil {
		d.outcomes = make(map[string]int)
	}
	d.outcomes[outcome(st, wantErr, want)]++
}

// sweep compares the whole keyspace at every revision still readable,
// then one below it.
func (d *differ) sweep(step int) {
	all := []byte{0}
	from := max(d.s.CompactRev()-1, 1)
	for rev := from; rev <= d.s.Rev(); rev++ {
		r := &kv.RangeOp{Key: all, End: all, Options: kv.RangeOptions{Revision: rev}}
		d.step(step, diffStep{Op: kv.Op{Range: r}})
		step++
	}
}

// outcome names the kind of answer st got, to show what a sequence covered.
func outcome(st diffStep, err error, res any) string {
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
