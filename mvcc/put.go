package mvcc

// PutRequest writes one key.
type PutRequest struct {
	Key   []byte
	Value []byte
	Lease int64 // attach to this lease; 0 detaches

	PrevKV      bool // return the previous version
	IgnoreValue bool // keep the current value; Value must be empty
	IgnoreLease bool // keep the current lease; Lease must be 0
}

// PutResult is the outcome of a put.
type PutResult struct {
	Revision int64     // the revision of the put
	PrevKV   *KeyValue // with PrevKV, the version replaced, if any
}

// DeleteRequest deletes a key or a range (see RangeOptions for end).
type DeleteRequest struct {
	Key    []byte
	End    []byte
	PrevKV bool // return the deleted versions
}

// DeleteResult is the outcome of a delete.
type DeleteResult struct {
	// Revision is the revision of the delete, or the current one when it
	// deleted nothing (no revision is made then).
	Revision int64
	Deleted  int64
	PrevKVs  []KeyValue
}

// putOverhead approximates the backend bytes a put costs beyond its key
// and value, for the quota check.
const putOverhead = 256

func (r *PutRequest) validate() error {
	switch {
	case len(r.Key) == 0:
		return invalidf("empty key")
	case r.IgnoreValue && len(r.Value) != 0:
		return invalidf("value is provided with ignore_value")
	case r.IgnoreLease && r.Lease != 0:
		return invalidf("lease is provided with ignore_lease")
	}
	return nil
}

// checkPut checks what a put needs of the current state: the key for
// ignore_value and ignore_lease, the lease for a leased put.
func (t *WriteTxn) checkPut(r *PutRequest, prev *KeyValue) error {
	if (r.IgnoreValue || r.IgnoreLease) && prev == nil {
		return ErrKeyNotFound
	}
	lease := r.Lease
	if r.IgnoreLease {
		lease = prev.Lease
	}
	if lease != 0 && !r.IgnoreLease && !t.leaseExists(lease) {
		return ErrLeaseNotFound
	}
	return nil
}

func (t *WriteTxn) leaseExists(id int64) bool {
	l := t.s.opts.Lessor
	return l != nil && l.Lookup(id)
}

// Put writes a key.
func (t *WriteTxn) Put(r PutRequest) (PutResult, error) {
	if err := r.validate(); err != nil {
		return PutResult{}, err
	}
	if err := t.CheckSpace(int64(len(r.Key) + len(r.Value) + putOverhead)); err != nil {
		return PutResult{}, err
	}
	// Like etcd, a put of its own looks its lease up before the key that
	// ignore_value or ignore_lease need; inside a txn, checkPut checks the
	// key first, as etcd checks a txn's puts.
	if r.Lease != 0 && !t.leaseExists(r.Lease) {
		return PutResult{}, ErrLeaseNotFound
	}
	return t.put(r)
}

// put writes a validated put whose space was checked.
func (t *WriteTxn) put(r PutRequest) (PutResult, error) {
	v := t.view()
	v.rev = t.rev // see this request's own writes
	cur, exists, err := v.current(r.Key)
	if err != nil {
		return PutResult{}, err
	}
	var prev *KeyValue
	if exists {
		prev = &cur
	}
	if err := t.checkPut(&r, prev); err != nil {
		return PutResult{}, err
	}
	kv := KeyValue{
		Key:            r.Key,
		Value:          r.Value,
		CreateRevision: t.rev,
		ModRevision:    t.rev,
		Version:        1,
		Lease:          r.Lease,
	}
	if prev != nil {
		kv.CreateRevision = prev.CreateRevision
		kv.Version = prev.Version + 1
		if r.IgnoreValue {
			kv.Value = prev.Value
		}
		if r.IgnoreLease {
			kv.Lease = prev.Lease
		}
	}
	if err := t.writeKV(kv, false); err != nil {
		return PutResult{}, err
	}
	var from int64
	if prev != nil {
		from = prev.Lease
	}
	if from != 0 || kv.Lease != 0 {
		t.moveLease(kv.Key, from, kv.Lease)
	}
	res := PutResult{Revision: t.rev}
	if r.PrevKV {
		res.PrevKV = prev
	}
	return res, nil
}

// DeleteRange deletes every key of the range; each deleted key gets its
// own sub-revision of one revision. Deleting nothing makes no revision.
func (t *WriteTxn) DeleteRange(r DeleteRequest) (DeleteResult, error) {
	if len(r.Key) == 0 {
		return DeleteResult{}, invalidf("empty key")
	}
	v := t.view()
	v.rev = t.rev
	krs, _ := v.keysIn(r.Key, r.End, t.rev, 0)
	res := DeleteResult{Deleted: int64(len(krs))}
	needKV := r.PrevKV || t.s.opts.Lessor != nil
	for _, kr := range krs {
		var prev KeyValue
		if needKV {
			var err error
			if prev, err = v.get(kr); err != nil {
				return DeleteResult{}, err
			}
		}
		if err := t.writeKV(KeyValue{Key: kr.key, ModRevision: t.rev}, true); err != nil {
			return DeleteResult{}, err
		}
		if prev.Lease != 0 {
			t.moveLease(kr.key, prev.Lease, 0)
		}
		if r.PrevKV {
			res.PrevKVs = append(res.PrevKVs, prev)
		}
	}
	res.Revision = t.Rev()
	return res, nil
}

// Writer is anything that runs write functions in the store's write
// transaction: a *Store, or a wrapper that observes its changes.
type Writer interface {
	Write(fn func(*WriteTxn) error) (Changes, error)
}

// Apply runs op through w and returns its result.
func Apply[T any](w Writer, op func(*WriteTxn) (T, error)) (T, error) {
	var res T
	_, err := w.Write(func(tx *WriteTxn) error {
		var err error
		res, err = op(tx)
		return err
	})
	return res, err
}

// Put writes one key.
func (s *Store) Put(r PutRequest) (PutResult, error) {
	return Apply(s, func(tx *WriteTxn) (PutResult, error) { return tx.Put(r) })
}

// DeleteRange deletes a key or a range.
func (s *Store) DeleteRange(r DeleteRequest) (DeleteResult, error) {
	return Apply(s, func(tx *WriteTxn) (DeleteResult, error) { return tx.DeleteRange(r) })
}
