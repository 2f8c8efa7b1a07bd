package mvcc

import "github.com/httpkv/httpkv/kv"

// putOverhead approximates the backend bytes a put costs beyond its key
// and value, for the quota check.
const putOverhead = 256

// checkPut checks what a put needs of the current state: the key for
// ignore_value and ignore_lease, the lease for a leased put.
func (t *WriteTxn) checkPut(r *kv.PutRequest, prev *kv.KeyValue) error {
	if (r.IgnoreValue || r.IgnoreLease) && prev == nil {
		return kv.Errorf(kv.ErrKeyNotFound, "the key %q does not exist: ignore_value and ignore_lease keep what an existing key has", r.Key)
	}
	lease := r.Lease
	if r.IgnoreLease {
		lease = prev.Lease
	}
	if lease != 0 && !r.IgnoreLease && !t.leaseExists(lease) {
		return kv.LeaseNotFound(lease)
	}
	return nil
}

func (t *WriteTxn) leaseExists(id int64) bool {
	l := t.s.lessor
	return l != nil && l.Lookup(id)
}

// Put writes a key.
func (t *WriteTxn) Put(r kv.PutRequest) (kv.PutResult, error) {
	if err := r.Validate(); err != nil {
		return kv.PutResult{}, err
	}
	if err := t.CheckSpace(int64(len(r.Key) + len(r.Value) + putOverhead)); err != nil {
		return kv.PutResult{}, err
	}
	// Like etcd, a put of its own looks its lease up before the key that
	// ignore_value or ignore_lease need; inside a txn, checkPut checks the
	// key first, as etcd checks a txn's puts.
	if r.Lease != 0 && !t.leaseExists(r.Lease) {
		return kv.PutResult{}, kv.LeaseNotFound(r.Lease)
	}
	return t.put(r)
}

// put writes a validated put whose space was checked.
func (t *WriteTxn) put(r kv.PutRequest) (kv.PutResult, error) {
	v := t.view()
	v.rev = t.rev // see this request's own writes
	cur, exists, err := v.current(r.Key)
	if err != nil {
		return kv.PutResult{}, err
	}
	var prev *kv.KeyValue
	if exists {
		prev = &cur
	}
	if err := t.checkPut(&r, prev); err != nil {
		return kv.PutResult{}, err
	}
	next := kv.KeyValue{
		Key:            r.Key,
		Value:          r.Value,
		CreateRevision: t.rev,
		ModRevision:    t.rev,
		Version:        1,
		Lease:          r.Lease,
	}
	if prev != nil {
		if prev.Version >= MaxRevision {
			return kv.PutResult{}, kv.Errorf(kv.ErrNoSpace, "the key %q is at version %d, the last a key holds", r.Key, MaxRevision)
		}
		next.CreateRevision = prev.CreateRevision
		next.Version = prev.Version + 1
		if r.IgnoreValue {
			next.Value = prev.Value
		}
		if r.IgnoreLease {
			next.Lease = prev.Lease
		}
	}
	if err := t.writeKV(next, false); err != nil {
		return kv.PutResult{}, err
	}
	var from int64
	if prev != nil {
		from = prev.Lease
	}
	if from != 0 || next.Lease != 0 {
		t.moveLease(next.Key, from, next.Lease)
	}
	res := kv.PutResult{Revision: t.rev}
	if r.PrevKV {
		res.PrevKV = prev
	}
	return res, nil
}

// DeleteRange deletes every key of the range; each deleted key gets its
// own sub-revision of one revision. Deleting nothing makes no revision.
func (t *WriteTxn) DeleteRange(r kv.DeleteRequest) (kv.DeleteResult, error) {
	if len(r.Key) == 0 {
		return kv.DeleteResult{}, invalidf("empty key")
	}
	v := t.view()
	v.rev = t.rev
	krs, _ := v.keysIn(r.Key, r.End, t.rev, 0)
	res := kv.DeleteResult{Deleted: int64(len(krs))}
	needKV := r.PrevKV || t.s.lessor != nil
	for _, kr := range krs {
		var prev kv.KeyValue
		if needKV {
			var err error
			if prev, err = v.get(kr); err != nil {
				return kv.DeleteResult{}, err
			}
		}
		if err := t.writeKV(kv.KeyValue{Key: kr.key, ModRevision: t.rev}, true); err != nil {
			return kv.DeleteResult{}, err
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

// Apply runs op in a write of s (see Store.Write) and returns its result.
func Apply[T any](s *Store, op func(*WriteTxn) (T, error)) (T, error) {
	var res T
	_, err := s.Write(func(tx *WriteTxn) error {
		var err error
		res, err = op(tx)
		return err
	})
	return res, err
}

// Put writes one key.
func (s *Store) Put(r kv.PutRequest) (kv.PutResult, error) {
	return Apply(s, func(tx *WriteTxn) (kv.PutResult, error) { return tx.Put(r) })
}

// DeleteRange deletes a key or a range.
func (s *Store) DeleteRange(r kv.DeleteRequest) (kv.DeleteResult, error) {
	return Apply(s, func(tx *WriteTxn) (kv.DeleteResult, error) { return tx.DeleteRange(r) })
}
