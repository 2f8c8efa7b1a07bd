package kv

// A rewrite makes a range hold given content at one new revision: the
// content of a file (an import) or the range's own content at a past
// revision (a restore). It writes only what differs: a put for each key
// whose value differs or that is missing, and, when it replaces, a delete
// for each key of the range the content lacks. A key whose value is
// already the one wanted is unchanged, whatever its lease; a key it puts
// has no lease.

// MaxListedKeys is how many keys of each kind a RewriteResult names.
const MaxListedKeys = 1000

// Entries are the keys and values an import wants a range to hold, in
// ascending key order, each key once (package reconcile builds them).
type Entries interface {
	Len() int
	// At returns the i-th key and its value; the slices are the
	// Entries', not to be changed.
	At(i int) (key, value []byte)
}

// RewriteRequest makes the keys of Key and End (a keyrange.Range), its
// scope, hold what it wants.
type RewriteRequest struct {
	Key, End []byte
	// Entries, for an import, are what the scope should hold; every key
	// lies in the scope. Nil for a restore.
	Entries Entries
	// Revision, for a restore (Entries nil), is the revision whose
	// content of the scope it brings back.
	Revision int64
	// Replace deletes the keys of the scope that the content lacks; a
	// restore always replaces.
	Replace bool
	// DryRun changes nothing and answers what would change.
	DryRun bool
	// UnchangedSince, when not 0, makes the rewrite fail with
	// ErrScopeChanged if any key of the scope was written or deleted
	// after this revision.
	UnchangedSince int64
}

// IsRestore reports whether r brings back a past revision.
func (r *RewriteRequest) IsRestore() bool { return r.Entries == nil }

// Validate checks what does not depend on the store.
func (r *RewriteRequest) Validate() error {
	switch {
	case len(r.Key) == 0:
		return Invalidf("key must not be empty")
	case r.IsRestore() && r.Revision <= 0:
		return Invalidf("a restore needs the revision to bring back, a positive number, not %d", r.Revision)
	case r.UnchangedSince < 0:
		return Invalidf("the revision of If-Match must not be negative, not %d", r.UnchangedSince)
	}
	return nil
}

// RewriteResult is what a rewrite changed, or would change (a dry run).
type RewriteResult struct {
	// Revision is the revision of the rewrite's writes, or the current
	// one when it wrote nothing.
	Revision int64
	// The keys created, updated, deleted and left as they were, counted
	// exactly.
	Created, Updated, Deleted, Unchanged int64
	// The first MaxListedKeys keys of each kind, in key order.
	CreatedKeys, UpdatedKeys, DeletedKeys [][]byte
}

// Changes is how many keys a rewrite writes.
func (r *RewriteResult) Changes() int64 { return r.Created + r.Updated + r.Deleted }

// ErrScopeChanged: a key of the scope of a rewrite with UnchangedSince
// was written or deleted after that revision.
var ErrScopeChanged = NewError(CodePreconditionFailed, "a key of the range changed after the revision of If-Match")

// ErrPatchFailed: a patch cannot apply to the value it was given (not
// JSON, a path that is not there, a test that fails).
var ErrPatchFailed = NewError(CodePatchFailed, "the patch cannot apply to the key's value")
