package wire

// RewriteResponse answers an import or a restore: what changed, or
// what would change (a dry run).
type RewriteResponse struct {
	// The revision of the changes, all in one; when nothing changed (or a dry run), the store's current revision.
	Header ResponseHeader `json:"header"`
	// Keys created: in the content, not in the range.
	Created int64 `json:"created" format:"int64" minimum:"0"`
	// Keys whose value changed.
	Updated int64 `json:"updated" format:"int64" minimum:"0"`
	// Keys deleted: in the range, not in the content (mode=replace, and a restore).
	Deleted int64 `json:"deleted" format:"int64" minimum:"0"`
	// Keys that already held the value wanted, left as they were (their leases too).
	Unchanged int64 `json:"unchanged" format:"int64" minimum:"0"`
	// The first 1000 keys of each kind, in key order; the counts are exact.
	Keys RewriteKeys `json:"keys"`
} // @name RewriteResponse

// RewriteKeys names the keys a rewrite changed. Each list is given as
// text, or, when any of its keys is not valid UTF-8, as base64 in its
// _base64 twin instead.
type RewriteKeys struct {
	Created       []string `json:"created,omitempty"`
	CreatedBase64 []string `json:"created_base64,omitempty" format:"byte"`
	Updated       []string `json:"updated,omitempty"`
	UpdatedBase64 []string `json:"updated_base64,omitempty" format:"byte"`
	Deleted       []string `json:"deleted,omitempty"`
	DeletedBase64 []string `json:"deleted_base64,omitempty" format:"byte"`
} // @name RewriteKeys

// RestoreRequest is the body of POST /v1/restore.
type RestoreRequest struct {
	Selector
	// The revision whose content of the range comes back; at or above the compact revision.
	Revision int64 `json:"revision" format:"int64" minimum:"1"`
	// Change nothing: answer what would change.
	DryRun bool `json:"dry_run,omitempty"`
} // @name RestoreRequest
