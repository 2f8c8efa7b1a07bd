package kv

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

// DeleteRequest deletes the keys of Key and End (a keyrange.Range).
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

// Validate checks the put as etcd does.
func (r *PutRequest) Validate() error {
	switch {
	case len(r.Key) == 0:
		return Invalidf("key must not be empty")
	case r.IgnoreValue && len(r.Value) != 0:
		return Invalidf("give no value with ignore_value: the key keeps its current value")
	case r.IgnoreLease && r.Lease != 0:
		return Invalidf("give no lease with ignore_lease: the key keeps its current lease")
	}
	return nil
}
