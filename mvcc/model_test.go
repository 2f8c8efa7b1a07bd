package mvcc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// modelMaxTxnOps is the store's MaxTxnOps in TestModel: small, so that
// random txns exceed it now and then.
const modelMaxTxnOps = 6

// errAbort is what TestModel's write functions fail with on purpose.
var errAbort = errors.New("write aborted by the test")

// TestModel runs long seeded random sequences of requests against a Store
// and against the reference model (model_ref_test.go), and checks every
// answer: revisions, key-values, counts, flags, events and the kind of
// error. Between requests it closes and reopens the store (also while a
// compaction is still removing history), defragments it, and reads the
// whole keyspace at past revisions. The seed is random; set
// MVCC_MODEL_SEED to the one a failure reports to replay it.
func TestModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MVCC_MODEL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MVCC_MODEL_SEED=%q: %v", s, err)
		}
		seed = n
	}
	for i, tc := range []struct {
		name   string
		lessor bool
		steps  int
	}{
		{name: "no lessor", lessor: false, steps: 2500},
		{name: "lessor", lessor: true, steps: 2500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newModelHarness(t, seed, seed+uint64(i), tc.lessor)
			for range tc.steps {
				h.step()
			}
			h.reopen()
			t.Logf("%d steps, %d reopens, %d of them cutting a compaction short", tc.steps, h.reopens, h.cutShort)
		})
	}
}

// kvOps is the request API that Store, WriteTxn and the model's write
// share, so that one step runs the same op on each.
type kvOps interface {
	Range(key, end []byte, o kv.RangeOptions) (kv.RangeResult, error)
	Put(kv.PutRequest) (kv.PutResult, error)
	DeleteRange(kv.DeleteRequest) (kv.DeleteResult, error)
	Txn(kv.TxnRequest) (kv.TxnResult, error)
}

// applyOp runs op on kv and returns the text of its answer.
func applyOp(kval kvOps, op *kv.Op) (string, error) {
	switch {
	case op.Range != nil:
		r, err := kval.Range(op.Range.Key, op.Range.End, op.Range.Options)
		return showAnswer(err, func() string { return showRangeResult(&r) }), err
	case op.Put != nil:
		r, err := kval.Put(*op.Put)
		return showAnswer(err, func() string { return showPutResult(&r) }), err
	case op.Delete != nil:
		r, err := kval.DeleteRange(*op.Delete)
		return showAnswer(err, func() string { return showDeleteResult(&r) }), err
	default:
		r, err := kval.Txn(*op.Txn)
		return showAnswer(err, func() string { return showTxnResult(&r) }), err
	}
}

// modelHarness drives one store and one model through a random sequence.
type modelHarness struct {
	t        testing.TB
	baseSeed uint64 // what MVCC_MODEL_SEED replays
	rng      *rand.Rand
	gen      *modelGen
	m        *model
	steps    int

	path   string
	opts   Options
	leases []int64     // the leases that exist; nil without a lessor
	lessor *fakeLessor // nil without one
	s      *Store

	// compactions are the compactions not waited for since the last
	// open; settled is set when every compaction is known to be done.
	compactions []<-chan error
	settled     bool

	log []string // the latest operations, for failure messages

	reopens, cutShort int // how often the store was reopened, and with a compaction unfinished
}

func newModelHarness(tb testing.TB, baseSeed, seed uint64, withLessor bool) *modelHarness {
	tb.Helper()
	h := &modelHarness{
		t:        tb,
		baseSeed: baseSeed,
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		path:     filepath.Join(tb.TempDir(), "db"),
		// A small batch limit makes compactions take several commits, so
		// a close often cuts one short.
		opts:    Options{NoFsync: true, MaxTxnOps: modelMaxTxnOps, CompactionBatchLimit: 3},
		settled: true,
	}
	genLeases := []int64{1} // no lessor: every lease is unknown
	if withLessor {
		h.leases = []int64{1, 2, 3}
		genLeases = []int64{1, 2, 3, 4} // 4 does not exist
	}
	h.m = newModel(h.leases, modelMaxTxnOps)
	h.gen = newModelGen(h.rng, h.m, genLeases)
	h.open()
	tb.Cleanup(func() { h.s.Close() })
	return h
}

func (h *modelHarness) fatalf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("step %d: %s\n\nlast operations, oldest first:\n%s\n\nreplay with: MVCC_MODEL_SEED=%d go test -race -run '%s' ./mvcc",
		h.steps, fmt.Sprintf(format, args...), strings.Join(h.log, "\n"), h.baseSeed, h.t.Name())
}

// record notes an operation for failure messages.
func (h *modelHarness) record(format string, args ...any) {
	const keep = 40
	if len(h.log) == keep {
		h.log = h.log[1:]
	}
	h.log = append(h.log, fmt.Sprintf("%d: ", h.steps)+fmt.Sprintf(format, args...))
}

func (h *modelHarness) expect(call, got, want string) {
	h.t.Helper()
	if got != want {
		h.fatalf("%s\n = %s\nwant %s", call, got, want)
	}
}

func (h *modelHarness) open() {
	h.t.Helper()
	h.lessor = nil
	var le Lessor // nil, not a nil *fakeLessor, when there are no leases
	if h.leases != nil {
		h.lessor = newFakeLessor(h.leases...)
		le = h.lessor
	}
	s, err := Open(h.path, le, nil, h.opts)
	if err != nil {
		h.fatalf("Open(%s) = %v, want nil", h.path, err)
	}
	h.s = s
}

func (h *modelHarness) step() {
	h.t.Helper()
	h.steps++
	g := h.gen
	switch n := h.rng.IntN(100); {
	case n < 24:
		r := g.put()
		h.single(kv.Op{Put: &r})
	case n < 34:
		r := g.deleteRange()
		h.single(kv.Op{Delete: &r})
	case n < 48:
		r := g.rangeOp()
		h.single(kv.Op{Range: &r})
	case n < 70:
		r := g.txn(0, g.chance(5))
		h.single(kv.Op{Txn: &r})
	case n < 78:
		h.write()
	case n < 84:
		h.compact(g.chance(2))
	case n < 86:
		h.reopen()
	case n < 88:
		h.compact(false)
		h.reopen()
	case n < 89:
		h.defrag()
	case n < 94:
		h.readTxn()
	default:
		h.history()
	}
	h.checkState()
	if h.steps%10 == 0 {
		h.checkPast()
	}
}

// single runs one request on the store and the model.
func (h *modelHarness) single(op kv.Op) {
	h.t.Helper()
	call := showOp(&op)
	h.record("%s", call)
	got, _ := applyOp(h.s, &op)
	w := h.m.write()
	want, err := applyOp(w, &op)
	if err == nil {
		w.commit()
	}
	h.expect(call, got, want)
}

// write runs several requests in one Store.Write, all at one revision;
// when one fails, or the function fails on purpose after them, none of
// them must leave a trace.
func (h *modelHarness) write() {
	h.t.Helper()
	ops := make([]kv.Op, 1+h.rng.IntN(4))
	for i := range ops {
		ops[i] = h.gen.op(1, false)
	}
	abort := h.gen.chance(4)
	call := fmt.Sprintf("Write(%s abort %v)", showOps(ops), abort)
	h.record("%s", call)

	var got []string
	changes, err := h.s.Write(func(tx *WriteTxn) error {
		for i := range ops {
			line, err := applyOp(tx, &ops[i])
			got = append(got, line)
			if err != nil {
				return err
			}
		}
		if abort {
			return errAbort
		}
		return nil
	})

	w := h.m.write()
	var want []string
	var wantErr error
	for i := range ops {
		line, err := applyOp(w, &ops[i])
		want = append(want, line)
		if err != nil {
			wantErr = err
			break
		}
	}
	if wantErr == nil && abort {
		wantErr = errAbort
	}
	wantChanges := kv.Changes{Revision: h.m.rev()}
	if wantErr == nil {
		wantChanges = w.changes()
		w.commit()
	}
	h.expect(call,
		fmt.Sprintf("%s => %s, %s", strings.Join(got, "; "), showChanges(changes), errorKind(err)),
		fmt.Sprintf("%s => %s, %s", strings.Join(want, "; "), showChanges(wantChanges), errorKind(wantErr)))
}

// compact compacts at a revision around the valid ones; with wait it then
// waits until the history is removed and checks what is left of it.
func (h *modelHarness) compact(wait bool) {
	h.t.Helper()
	lo := max(1, h.m.compactRev-1)
	rev := lo + h.rng.Int64N(h.m.rev()+1-lo+1)
	call := fmt.Sprintf("Compact(%d)", rev)
	h.record("%s wait %v", call, wait)
	done, err := h.s.Compact(rev)
	h.expect(call, errorKind(err), errorKind(h.m.Compact(rev)))
	if err != nil {
		return
	}
	h.compactions = append(h.compactions, done)
	if !wait {
		h.settled = false
		return
	}
	// Compactions run one at a time, in order: once this one is done, so
	// are all before it, those resumed by Open included.
	for _, c := range h.compactions {
		if err := <-c; err != nil {
			h.fatalf("%s: compaction finished with %v, want nil", call, err)
		}
	}
	h.compactions, h.settled = nil, true
	h.checkHistory(h.m.compactRev)
	h.checkBackend()
}

// checkBackend checks, once compaction has settled, that the history in
// the file is exactly what the model says survives it: nothing left
// behind, nothing more removed.
func (h *modelHarness) checkBackend() {
	h.t.Helper()
	rt, err := h.s.Read()
	if err != nil {
		h.fatalf("Read() = %v, want nil", err)
	}
	defer rt.End()
	var got []kv.Revision
	err = rt.tx.Bucket(keyBucket).ForEach(func(k, _ []byte) error {
		rev, _, err := parseRevBytes(k)
		got = append(got, rev)
		return err
	})
	if err != nil {
		h.fatalf("reading the key bucket: %v", err)
	}
	if want := h.m.compactedRevisions(); !slices.Equal(got, want) {
		h.fatalf("after compaction at %d the file holds revisions\n%v\nwant\n%v", h.m.compactRev, got, want)
	}
}

// reopen closes the store and opens it again from its file.
func (h *modelHarness) reopen() {
	h.t.Helper()
	h.record("Close, Open")
	if err := h.s.Close(); err != nil {
		h.fatalf("Close() = %v, want nil", err)
	}
	// Close waits for the compactor: every compaction has an outcome.
	cut := false
	for _, c := range h.compactions {
		select {
		case err := <-c:
			switch {
			case errors.Is(err, kv.ErrClosed):
				cut = true
			case err != nil:
				h.fatalf("compaction cut short by Close finished with %v, want nil or ErrClosed", err)
			}
		default:
			h.fatalf("compaction has no outcome after Close")
		}
	}
	if cut {
		h.cutShort++
	}
	h.compactions = nil
	h.reopens++
	// Open resumes a compaction that Close cut short.
	h.settled = h.settled || h.m.compactRev == 0
	h.open()
	h.checkState()
	h.checkPast()
}

func (h *modelHarness) defrag() {
	h.t.Helper()
	h.record("Defrag")
	if err := h.s.Defrag(); err != nil {
		h.fatalf("Defrag() = %v, want nil", err)
	}
}

// readTxn runs ranges and a read-only txn on one snapshot.
func (h *modelHarness) readTxn() {
	h.t.Helper()
	h.record("Read")
	rt, err := h.s.Read()
	if err != nil {
		h.fatalf("Read() = %v, want nil", err)
	}
	defer rt.End()
	if rt.Rev() != h.m.rev() || rt.CompactRev() != h.m.compactRev {
		h.fatalf("Read() at rev %d compact %d, want %d compact %d", rt.Rev(), rt.CompactRev(), h.m.rev(), h.m.compactRev)
	}
	w := h.m.write() // reads only: never committed
	for range 3 {
		r := h.gen.rangeOp()
		call := "ReadTxn." + showRange(r.Key, r.End, &r.Options)
		got, err := rt.Range(r.Key, r.End, r.Options)
		want, wantErr := w.Range(r.Key, r.End, r.Options)
		h.expect(call,
			showAnswer(err, func() string { return showRangeResult(&got) }),
			showAnswer(wantErr, func() string { return showRangeResult(&want) }))
	}
	r := h.gen.txn(0, true)
	call := "ReadTxn." + showTxn(&r)
	got, err := rt.Txn(r)
	want, wantErr := w.Txn(r)
	h.expect(call,
		showAnswer(err, func() string { return showTxnResult(&got) }),
		showAnswer(wantErr, func() string { return showTxnResult(&want) }))
}

// history reads the history from a random revision, compacted or not.
func (h *modelHarness) history() {
	h.t.Helper()
	from := h.m.compactRev + 1 + h.rng.Int64N(h.m.rev()-h.m.compactRev+1)
	if h.m.compactRev > 0 && h.gen.chance(4) {
		from = h.rng.Int64N(h.m.compactRev)
	}
	h.record("History(%d)", from)
	h.checkHistory(from)
}

// checkHistory checks ReadTxn.History(from). At the compact revision
// itself, what is left depends on how far compaction got: it is checked
// only once compaction has settled.
func (h *modelHarness) checkHistory(from int64) {
	h.t.Helper()
	if from == h.m.compactRev && !h.settled {
		return
	}
	rt, err := h.s.Read()
	if err != nil {
		h.fatalf("Read() = %v, want nil", err)
	}
	defer rt.End()
	var got []kv.Event
	err = rt.History(from, func(ev kv.Event) bool {
		got = append(got, ev)
		return true
	})
	var want []kv.Event
	var wantErr error
	switch {
	case from < h.m.compactRev:
		wantErr = &kv.CompactedError{CompactRevision: h.m.compactRev}
	case from == h.m.compactRev:
		want = h.m.compactedHistory()
	default:
		want = h.m.history(from)
	}
	h.expect(fmt.Sprintf("History(%d)", from),
		showAnswer(err, func() string { return showEvents(got) }),
		showAnswer(wantErr, func() string { return showEvents(want) }))
}

// checkState checks the store's revisions, key count and leases.
func (h *modelHarness) checkState() {
	h.t.Helper()
	if rev, crev := h.s.Rev(), h.s.CompactRev(); rev != h.m.rev() || crev != h.m.compactRev {
		h.fatalf("Rev(), CompactRev() = %d, %d, want %d, %d", rev, crev, h.m.rev(), h.m.compactRev)
	}
	if keys := h.s.Stats().Keys; keys != int64(len(h.m.current())) {
		h.fatalf("Stats().Keys = %d, want %d", keys, len(h.m.current()))
	}
	if h.lessor == nil {
		return
	}
	byLease := make(map[int64][]string)
	for k, kval := range h.m.current() {
		if kval.Lease != 0 {
			byLease[kval.Lease] = append(byLease[kval.Lease], k)
		}
	}
	if got, want := h.lessor.String(), showLeases(byLease); got != want {
		h.fatalf("keys attached to leases = %s, want %s", got, want)
	}
}

// checkPast reads the whole keyspace at the compact revision, the current
// one and a few between, and checks that reads below the compact revision
// and above the current one fail.
func (h *modelHarness) checkPast() {
	h.t.Helper()
	cur, compacted := h.m.rev(), h.m.compactRev
	lo := max(compacted, 1)
	revs := []int64{lo, cur}
	for range 3 {
		revs = append(revs, lo+h.rng.Int64N(cur-lo+1))
	}
	if compacted > 1 {
		revs = append(revs, 1+h.rng.Int64N(compacted-1))
	}
	revs = append(revs, cur+1)
	all := []byte{0}
	for _, rev := range revs {
		o := kv.RangeOptions{Revision: rev}
		got, err := h.s.Range(all, all, o)
		want, wantErr := h.m.Range(all, all, o)
		h.expect(showRange(all, all, &o),
			showAnswer(err, func() string { return showRangeResult(&got) }),
			showAnswer(wantErr, func() string { return showRangeResult(&want) }))
	}
}
