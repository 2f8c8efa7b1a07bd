package mvcc

import (
	"bytes"
	"cmp"
	"maps"
	"slices"

	"github.com/httpkv/httpkv/kv"
)

// model is the reference TestModel holds the store to. It keeps the whole
// history as one snapshot of the live keys per revision and answers every
// request by the plain reading of etcd's rules, with none of the store's
// index, encoding or compaction machinery: compaction only raises the
// revision below which reads fail.
type model struct {
	// states[r] is the keyspace as of revision r. states[0] is unused: the
	// empty store is at revision 1.
	states []map[string]kv.KeyValue
	// events[r] are the changes revision r made, in order.
	events     [][]kv.Event
	compactRev int64
	leases     map[int64]bool // the leases that exist
	maxTxnOps  int
}

func newModel(leases []int64, maxTxnOps int) *model {
	m := &model{
		states:    []map[string]kv.KeyValue{{}, {}},
		events:    [][]kv.Event{nil, nil},
		leases:    make(map[int64]bool),
		maxTxnOps: maxTxnOps,
	}
	for _, id := range leases {
		m.leases[id] = true
	}
	return m
}

// rev is the current revision.
func (m *model) rev() int64 { return int64(len(m.states)) - 1 }

func (m *model) current() map[string]kv.KeyValue { return m.states[m.rev()] }

// checkRev resolves the revision a read asks for, as the read view of a
// store at revision current does.
func (m *model) checkRev(rev, current int64) (int64, error) {
	switch {
	case rev > current:
		return 0, kv.ErrFutureRevision
	case rev <= 0:
		return current, nil
	case rev < m.compactRev:
		return 0, &kv.CompactedError{CompactRevision: m.compactRev}
	}
	return rev, nil
}

// Range reads outside any write.
func (m *model) Range(key, end []byte, o kv.RangeOptions) (kv.RangeResult, error) {
	if err := modelCheckRange(key, &o); err != nil {
		return kv.RangeResult{}, err
	}
	rev, err := m.checkRev(o.Revision, m.rev())
	if err != nil {
		return kv.RangeResult{}, err
	}
	return rangeState(m.states[rev], key, end, o, m.rev()), nil
}

// Compact raises the compact revision.
func (m *model) Compact(rev int64) error {
	if rev <= m.compactRev {
		return &kv.CompactedError{CompactRevision: m.compactRev}
	}
	if rev > m.rev() {
		return kv.ErrFutureRevision
	}
	m.compactRev = rev
	return nil
}

// history returns the events of revisions from through the current one.
func (m *model) history(from int64) []kv.Event {
	var evs []kv.Event
	for r := max(from, 1); r <= m.rev(); r++ {
		evs = append(evs, m.events[r]...)
	}
	return evs
}

// compactedHistory returns what history from the compact revision on
// holds once a compaction at it has finished: of the events at the compact
// revision itself, only the last one of each key.
func (m *model) compactedHistory() []kv.Event {
	at := m.events[m.compactRev]
	var evs []kv.Event
	for i, ev := range at {
		superseded := slices.ContainsFunc(at[i+1:], func(later kv.Event) bool {
			return bytes.Equal(later.KV.Key, ev.KV.Key)
		})
		if !superseded {
			evs = append(evs, ev)
		}
	}
	return append(evs, m.history(m.compactRev+1)...)
}

// compactedRevisions returns the revisions the backend holds once a
// compaction at the compact revision has finished: every revision above
// it and, of each key, the newest revision at or below it if that is a
// put, or a delete made exactly at it. A revision's sub part is the
// position of its event in its revision.
func (m *model) compactedRevisions() []kv.Revision {
	type last struct {
		rev kv.Revision
		del bool
	}
	newest := make(map[string]last)
	for r := int64(1); r <= m.compactRev; r++ {
		for i, ev := range m.events[r] {
			newest[string(ev.KV.Key)] = last{kv.Revision{Main: r, Sub: int64(i)}, ev.Type == kv.EventDelete}
		}
	}
	var revs []kv.Revision
	for _, l := range newest {
		if !l.del || l.rev.Main == m.compactRev {
			revs = append(revs, l.rev)
		}
	}
	for r := m.compactRev + 1; r <= m.rev(); r++ {
		for i := range m.events[r] {
			revs = append(revs, kv.Revision{Main: r, Sub: int64(i)})
		}
	}
	slices.SortFunc(revs, func(a, b kv.Revision) int {
		return cmp.Or(cmp.Compare(a.Main, b.Main), cmp.Compare(a.Sub, b.Sub))
	})
	return revs
}

// modelWrite is one write request applied to the model: it changes a copy
// of the current keyspace, which becomes the next revision if the request
// changed something and did not fail.
type modelWrite struct {
	m      *model
	state  map[string]kv.KeyValue
	events []kv.Event
}

func (m *model) write() *modelWrite {
	return &modelWrite{m: m, state: maps.Clone(m.current())}
}

// rev is the revision the request's writes get.
func (w *modelWrite) rev() int64 { return w.m.rev() + 1 }

// readRev is the revision the request's reads see: its own once it has
// written.
func (w *modelWrite) readRev() int64 {
	if len(w.events) == 0 {
		return w.m.rev()
	}
	return w.rev()
}

// changes is what the store reports for the request once it succeeds.
func (w *modelWrite) changes() kv.Changes {
	return kv.Changes{Revision: w.readRev(), Events: w.events}
}

func (w *modelWrite) commit() {
	if len(w.events) == 0 {
		return
	}
	w.m.states = append(w.m.states, w.state)
	w.m.events = append(w.m.events, w.events)
}

// Put is a put outside a txn. Like etcd it looks the lease up before the
// key that ignore_value and ignore_lease need.
func (w *modelWrite) Put(r kv.PutRequest) (kv.PutResult, error) {
	if err := modelCheckPut(&r); err != nil {
		return kv.PutResult{}, err
	}
	if r.Lease != 0 && !w.m.leases[r.Lease] {
		return kv.PutResult{}, kv.ErrLeaseNotFound
	}
	if err := w.checkPut(&r); err != nil {
		return kv.PutResult{}, err
	}
	return w.put(r), nil
}

// checkPut is etcd's check of a put against the state it will apply to:
// the key if ignore_value or ignore_lease need it, then the lease.
func (w *modelWrite) checkPut(r *kv.PutRequest) error {
	if _, ok := w.state[string(r.Key)]; !ok && (r.IgnoreValue || r.IgnoreLease) {
		return kv.ErrKeyNotFound
	}
	if r.Lease != 0 && !w.m.leases[r.Lease] {
		return kv.ErrLeaseNotFound
	}
	return nil
}

func (w *modelWrite) put(r kv.PutRequest) kv.PutResult {
	prev, existed := w.state[string(r.Key)]
	kval := kv.KeyValue{
		Key:            bytes.Clone(r.Key),
		Value:          bytes.Clone(r.Value),
		CreateRevision: w.rev(),
		ModRevision:    w.rev(),
		Version:        1,
		Lease:          r.Lease,
	}
	if existed {
		kval.CreateRevision = prev.CreateRevision
		kval.Version = prev.Version + 1
		if r.IgnoreValue {
			kval.Value = prev.Value
		}
		if r.IgnoreLease {
			kval.Lease = prev.Lease
		}
	}
	w.state[string(r.Key)] = kval
	w.events = append(w.events, kv.Event{Type: kv.EventPut, KV: kval})
	res := kv.PutResult{Revision: w.rev()}
	if r.PrevKV && existed {
		res.PrevKV = &prev
	}
	return res
}

// DeleteRange deletes the live keys of the range, in key order.
func (w *modelWrite) DeleteRange(r kv.DeleteRequest) (kv.DeleteResult, error) {
	if len(r.Key) == 0 {
		return kv.DeleteResult{}, kv.ErrInvalidArgument
	}
	keys := liveKeysIn(w.state, r.Key, r.End)
	res := kv.DeleteResult{Deleted: int64(len(keys))}
	for _, k := range keys {
		if r.PrevKV {
			res.PrevKVs = append(res.PrevKVs, w.state[k])
		}
		delete(w.state, k)
		w.events = append(w.events, kv.Event{Type: kv.EventDelete, KV: kv.KeyValue{Key: []byte(k), ModRevision: w.rev()}})
	}
	res.Revision = w.readRev()
	return res, nil
}

// Range reads as the request sees the store: its own writes at readRev,
// history below.
func (w *modelWrite) Range(key, end []byte, o kv.RangeOptions) (kv.RangeResult, error) {
	if err := modelCheckRange(key, &o); err != nil {
		return kv.RangeResult{}, err
	}
	rev, err := w.m.checkRev(o.Revision, w.readRev())
	if err != nil {
		return kv.RangeResult{}, err
	}
	state := w.state
	if rev <= w.m.rev() {
		state = w.m.states[rev]
	}
	return rangeState(state, key, end, o, w.readRev()), nil
}

// modelPath is the branch a txn takes and the paths of the nested txns on
// it, in order.
type modelPath struct {
	succeeded bool
	nested    []*modelPath
}

func (p *modelPath) branch(r *kv.TxnRequest) []kv.Op {
	if p.succeeded {
		return r.Success
	}
	return r.Failure
}

// Txn runs a txn as etcd does: the request's shape and duplicate keys are
// checked first; then every compare on the path, nested ones included, is
// evaluated on the state before the txn; then the ops of the path are
// checked in order (ranges at valid revisions, puts with their key and
// lease), and only then run, each seeing the writes of those before it.
// Like etcd, each result reports the revision current when its op ran,
// and a txn the one current when its last op had run.
func (w *modelWrite) Txn(r kv.TxnRequest) (kv.TxnResult, error) {
	if err := modelCheckTxn(&r, w.m.maxTxnOps); err != nil {
		return kv.TxnResult{}, err
	}
	for _, ops := range [][]kv.Op{r.Success, r.Failure} {
		if _, _, err := duplicateWrites(ops); err != nil {
			return kv.TxnResult{}, err
		}
	}
	p := w.path(&r)
	if err := w.checkPath(&r, p); err != nil {
		return kv.TxnResult{}, err
	}
	return w.runTxn(&r, p)
}

func (w *modelWrite) path(r *kv.TxnRequest) *modelPath {
	p := &modelPath{succeeded: true}
	for _, c := range r.Compare {
		if !compareHolds(w.state, &c) {
			p.succeeded = false
			break
		}
	}
	for _, op := range p.branch(r) {
		if op.Txn != nil {
			p.nested = append(p.nested, w.path(op.Txn))
		}
	}
	return p
}

// compareHolds evaluates c over every live key of its range: a range with
// no key compares as a zero KeyValue, except that a value compare fails.
func compareHolds(state map[string]kv.KeyValue, c *kv.Compare) bool {
	keys := liveKeysIn(state, c.Key, c.End)
	if len(keys) == 0 {
		return c.Target != kv.CompareValue && compareField(c, kv.KeyValue{})
	}
	for _, k := range keys {
		if !compareField(c, state[k]) {
			return false
		}
	}
	return true
}

func compareField(c *kv.Compare, kval kv.KeyValue) bool {
	var r int
	switch c.Target {
	case kv.CompareValue:
		r = bytes.Compare(kval.Value, c.Value)
	case kv.CompareVersion:
		r = cmp.Compare(kval.Version, c.Number)
	case kv.CompareCreate:
		r = cmp.Compare(kval.CreateRevision, c.Number)
	case kv.CompareMod:
		r = cmp.Compare(kval.ModRevision, c.Number)
	case kv.CompareLease:
		r = cmp.Compare(kval.Lease, c.Number)
	}
	switch c.Result {
	case kv.CompareEqual:
		return r == 0
	case kv.CompareNotEqual:
		return r != 0
	case kv.CompareGreater:
		return r > 0
	}
	return r < 0
}

func (w *modelWrite) checkPath(r *kv.TxnRequest, p *modelPath) error {
	nested := p.nested
	for _, op := range p.branch(r) {
		var err error
		switch {
		case op.Range != nil:
			if rev := op.Range.Options.Revision; rev != 0 {
				_, err = w.m.checkRev(rev, w.readRev())
			}
		case op.Put != nil:
			err = w.checkPut(op.Put)
		case op.Txn != nil:
			err = w.checkPath(op.Txn, nested[0])
			nested = nested[1:]
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *modelWrite) runTxn(r *kv.TxnRequest, p *modelPath) (kv.TxnResult, error) {
	res := kv.TxnResult{Succeeded: p.succeeded}
	nested := p.nested
	for _, op := range p.branch(r) {
		var out kv.OpResult
		switch {
		case op.Range != nil:
			rr, err := w.Range(op.Range.Key, op.Range.End, op.Range.Options)
			if err != nil {
				return kv.TxnResult{}, err
			}
			out.Range = &rr
		case op.Put != nil:
			pr := w.put(*op.Put)
			out.Put = &pr
		case op.Delete != nil:
			dr, err := w.DeleteRange(*op.Delete)
			if err != nil {
				return kv.TxnResult{}, err
			}
			out.Delete = &dr
		case op.Txn != nil:
			tr, err := w.runTxn(op.Txn, nested[0])
			if err != nil {
				return kv.TxnResult{}, err
			}
			nested = nested[1:]
			out.Txn = &tr
		}
		res.Responses = append(res.Responses, out)
	}
	res.Revision = w.readRev()
	return res, nil
}

// modelCheckTxn is etcd's shape check: at most maxOps compares and ops
// per branch, nested txns getting what their parent leaves, and every op
// well formed.
func modelCheckTxn(r *kv.TxnRequest, maxOps int) error {
	n := max(len(r.Compare), len(r.Success), len(r.Failure))
	if n > maxOps {
		return kv.ErrTooManyOps
	}
	for _, c := range r.Compare {
		if len(c.Key) == 0 {
			return kv.ErrInvalidArgument
		}
	}
	for _, op := range slices.Concat(r.Success, r.Failure) {
		var err error
		switch {
		case op.Range != nil:
			err = modelCheckRange(op.Range.Key, &op.Range.Options)
		case op.Put != nil:
			err = modelCheckPut(op.Put)
		case op.Delete != nil:
			if len(op.Delete.Key) == 0 {
				err = kv.ErrInvalidArgument
			}
		case op.Txn != nil:
			err = modelCheckTxn(op.Txn, maxOps-n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func modelCheckPut(r *kv.PutRequest) error {
	if len(r.Key) == 0 || (r.IgnoreValue && len(r.Value) != 0) || (r.IgnoreLease && r.Lease != 0) {
		return kv.ErrInvalidArgument
	}
	return nil
}

func modelCheckRange(key []byte, o *kv.RangeOptions) error {
	if len(key) == 0 ||
		o.SortTarget < kv.SortByKey || o.SortTarget > kv.SortByValue ||
		o.SortOrder < kv.SortNone || o.SortOrder > kv.SortDescend ||
		o.Limit < 0 || o.Revision < 0 {
		return kv.ErrInvalidArgument
	}
	return nil
}

// deleteSpan is the range of a delete in a txn.
type deleteSpan struct{ key, end []byte }

// duplicateWrites is etcd's rule against a txn writing a key twice. At one
// level of ops, no key is put twice and no key is put that a delete covers.
// The puts of a nested txn's branches count at its parent's level (the two
// branches may put the same key, as only one runs), and its deletes cover
// the parent's own puts and those of nested txns after it. It returns the
// puts and deletes of ops for the level above.
func duplicateWrites(ops []kv.Op) (map[string]bool, []deleteSpan, error) {
	var dels []deleteSpan
	for _, op := range ops {
		if op.Delete != nil {
			dels = append(dels, deleteSpan{op.Delete.Key, op.Delete.End})
		}
	}
	covered := func(k string) bool {
		return slices.ContainsFunc(dels, func(d deleteSpan) bool { return keyInSpan(k, d.key, d.end) })
	}
	puts := make(map[string]bool)
	for _, op := range ops {
		if op.Txn == nil {
			continue
		}
		thenPuts, thenDels, err := duplicateWrites(op.Txn.Success)
		if err != nil {
			return nil, nil, err
		}
		elsePuts, elseDels, err := duplicateWrites(op.Txn.Failure)
		if err != nil {
			return nil, nil, err
		}
		for k := range thenPuts {
			if puts[k] || covered(k) {
				return nil, nil, kv.ErrDuplicateKey
			}
		}
		for k := range elsePuts {
			if (puts[k] && !thenPuts[k]) || covered(k) {
				return nil, nil, kv.ErrDuplicateKey
			}
		}
		maps.Copy(puts, thenPuts)
		maps.Copy(puts, elsePuts)
		dels = append(dels, thenDels...)
		dels = append(dels, elseDels...)
	}
	for _, op := range ops {
		if op.Put == nil {
			continue
		}
		k := string(op.Put.Key)
		if puts[k] || covered(k) {
			return nil, nil, kv.ErrDuplicateKey
		}
		puts[k] = true
	}
	return puts, dels, nil
}

// keyInSpan reports whether k lies in the range key..end by etcd's
// convention: end empty for key alone, "\x00" for every key from key on,
// [key, end) otherwise.
func keyInSpan(k string, key, end []byte) bool {
	switch {
	case len(end) == 0:
		return k == string(key)
	case len(end) == 1 && end[0] == 0:
		return k >= string(key)
	}
	return k >= string(key) && k < string(end)
}

// liveKeysIn returns, in order, the keys of state in the range key..end.
func liveKeysIn(state map[string]kv.KeyValue, key, end []byte) []string {
	var keys []string
	for k := range state {
		if keyInSpan(k, key, end) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// rangeState answers a range over state as etcd's server does: count
// everything in the range, drop what the revision filters reject, sort
// (a target other than the key ascends by default; ties keep key order),
// then cut at the limit. header is the revision the answer reports.
//
// Like etcd, it reads only the first limit+1 keys, in key order, when the
// request has a limit, no filter and no sort order of its own, even if a
// sort target then sorts those: such a range sorts a page, not the range.
func rangeState(state map[string]kv.KeyValue, key, end []byte, o kv.RangeOptions, header int64) kv.RangeResult {
	keys := liveKeysIn(state, key, end)
	res := kv.RangeResult{Count: int64(len(keys)), Revision: header}
	if o.CountOnly {
		return res
	}
	filtered := o.MinModRevision != 0 || o.MaxModRevision != 0 || o.MinCreateRevision != 0 || o.MaxCreateRevision != 0
	if o.SortOrder == kv.SortNone && !filtered && o.Limit > 0 && int64(len(keys)) > o.Limit+1 {
		keys = keys[:o.Limit+1]
	}
	within := func(n, lo, hi int64) bool { return (lo == 0 || n >= lo) && (hi == 0 || n <= hi) }
	for _, k := range keys {
		kval := state[k]
		if within(kval.ModRevision, o.MinModRevision, o.MaxModRevision) &&
			within(kval.CreateRevision, o.MinCreateRevision, o.MaxCreateRevision) {
			res.KVs = append(res.KVs, kval)
		}
	}
	order := o.SortOrder
	if o.SortTarget != kv.SortByKey && order == kv.SortNone {
		order = kv.SortAscend
	}
	if order != kv.SortNone {
		slices.SortStableFunc(res.KVs, func(a, b kv.KeyValue) int {
			var c int
			switch o.SortTarget {
			case kv.SortByKey:
				c = bytes.Compare(a.Key, b.Key)
			case kv.SortByVersion:
				c = cmp.Compare(a.Version, b.Version)
			case kv.SortByCreate:
				c = cmp.Compare(a.CreateRevision, b.CreateRevision)
			case kv.SortByMod:
				c = cmp.Compare(a.ModRevision, b.ModRevision)
			case kv.SortByValue:
				c = bytes.Compare(a.Value, b.Value)
			}
			if order == kv.SortDescend {
				return -c
			}
			return c
		})
	}
	if o.Limit > 0 && int64(len(res.KVs)) > o.Limit {
		res.KVs = res.KVs[:o.Limit]
		res.More = true
	}
	if o.KeysOnly {
		for i := range res.KVs {
			res.KVs[i].Value = nil
		}
	}
	return res
}
