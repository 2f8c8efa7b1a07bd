package wire

// The types of these files (types*.go, txn.go) are the wire, declared
// once: handlers decode request bodies into them and encode answers from
// them, and swag documents them (each names its schema with an @name
// comment, which is also its Go name here); the end-to-end tests check
// every answer the server gives against the document made from them. The
// answers on the hot paths (reads, lists, watch events, txn results) are
// appended by hand (append.go) for speed; httpapi's wire_types_test.go
// decodes what they write into these types and checks no field is lost or
// added.
//
// A field without omitempty is always present; a field with it may be
// left out. A key-like field and its *_base64 twin are both optional in
// the schema, but exactly one of a key and its twin is present, and never
// both of any pair: JSON Schema cannot say that without making clients
// awkward, so the descriptions do.

// ResponseHeader is the "header" of every answer that reflects the store.
type ResponseHeader struct {
	// The store's current revision when the request was served (also for a read at a past revision); the X-Revision header carries the same number.
	Revision int64 `json:"revision" format:"int64" minimum:"1" example:"42"`
} // @name ResponseHeader

// KeyValue is a key with its value and metadata.
type KeyValue struct {
	// The key, when its bytes are valid UTF-8; otherwise key_base64 is given instead.
	Key string `json:"key,omitempty" example:"config/db/url"`
	// The key's bytes in standard base64, when they are not valid UTF-8.
	KeyBase64 string `json:"key_base64,omitempty" format:"byte"`
	// The value, when its bytes are valid UTF-8; otherwise value_base64 is given instead. Neither is present for a keys_only read or a delete event.
	Value string `json:"value,omitempty" example:"postgres://db:5432"`
	// The value's bytes in standard base64, when they are not valid UTF-8.
	ValueBase64 string `json:"value_base64,omitempty" format:"byte"`
	// The revision that created the key (since it last did not exist).
	CreateRevision int64 `json:"create_revision" format:"int64" minimum:"0" example:"7"`
	// The revision of the key's last change.
	ModRevision int64 `json:"mod_revision" format:"int64" minimum:"0" example:"41"`
	// The number of changes since the key was created (1 after the first put; 0 in a delete event).
	Version int64 `json:"version" format:"int64" minimum:"0" example:"3"`
	// The ID of the lease attached to the key, 0 when none.
	Lease int64 `json:"lease" format:"int64" minimum:"0" example:"0"`
} // @name KeyValue

// ErrorResponse is the body of every error answer. Its schema is not named
// Error, a name that many languages' clients would shadow a built-in with.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
} // @name ErrorResponse

// ErrorBody is the error object.
type ErrorBody struct {
	// The error's code; the HTTP status says its class. not_found and method_not_allowed answer a path or method the API does not have, internal an unexpected failure.
	Code string `json:"code" enums:"invalid_argument,future_revision,unauthenticated,permission_denied,not_found,key_not_found,lease_not_found,user_not_found,role_not_found,permission_not_found,method_not_allowed,already_exists,compacted,precondition_failed,patch_failed,request_too_large,unsupported_media_type,too_many_requests,internal,unavailable,no_space,lock_timeout,no_leader,not_leader,stream_not_found,watch_not_found,not_supported" example:"key_not_found"`
	// Human-readable text; it never names other users' keys or permissions.
	Message string `json:"message" example:"key not found"`
	// With compacted: the store's compact revision.
	CompactRevision int64 `json:"compact_revision,omitempty" format:"int64"`
	// With key_not_found and precondition_failed: the store's current revision.
	Revision int64 `json:"revision,omitempty" format:"int64"`
	// With precondition_failed: the key as it is now, if it exists.
	KV *KeyValue `json:"kv,omitempty"`
	// With an answer too large: the bound on its key and value bytes.
	MaxResponseBytes int64 `json:"max_response_bytes,omitempty" format:"int64"`
	// With a txn range without a limit that matched too many keys: the bound.
	MaxKeys int64 `json:"max_keys,omitempty" format:"int64"`
} // @name ErrorBody

// GetResponse answers GET /v1/kv/{key}.
type GetResponse struct {
	Header ResponseHeader `json:"header"`
	KV     KeyValue       `json:"kv"`
} // @name GetResponse

// PutResponse answers PUT /v1/kv/{key}.
type PutResponse struct {
	Header ResponseHeader `json:"header"`
	// The key before the put, with prev_kv=true when it existed.
	PrevKV *KeyValue `json:"prev_kv,omitempty"`
	// With ttl: the ID of the key's own lease, granted by the put.
	Lease int64 `json:"lease,omitempty" format:"int64" minimum:"1" maximum:"9007199254740991"`
} // @name PutResponse

// DeleteResponse answers a delete.
type DeleteResponse struct {
	Header ResponseHeader `json:"header"`
	// How many keys were deleted. Deleting nothing makes no revision.
	Deleted int64 `json:"deleted" format:"int64" minimum:"0"`
	// With prev_kv=true: the deleted keys as they were.
	PrevKVs []KeyValue `json:"prev_kvs,omitempty"`
} // @name DeleteResponse

// ListResponse answers GET /v1/kv.
type ListResponse struct {
	Header ResponseHeader `json:"header"`
	// The keys of this page (empty with count_only=true; without values with keys_only=true).
	KVs []KeyValue `json:"kvs"`
	// How many keys the whole range holds at the revision read, over every page.
	Count int64 `json:"count" format:"int64" minimum:"0"`
	// Whether keys beyond this page remain.
	More bool `json:"more"`
	// Present when more is true and the order is key-ascending: pass it as page_token to read the next page at this page's revision.
	NextPageToken string `json:"next_page_token,omitempty"`
} // @name ListResponse

// TxnResponse answers POST /v1/txn (and a nested txn op).
type TxnResponse struct {
	Header ResponseHeader `json:"header"`
	// Whether every compare held, so that success ran rather than failure.
	Succeeded bool `json:"succeeded"`
	// One answer per op of the branch that ran, in order.
	Responses []ResponseOp `json:"responses"`
} // @name TxnResponse

// ResponseOp is the answer to one txn op: the field of the op's kind.
type ResponseOp struct {
	Put    *PutResponse    `json:"put,omitempty"`
	Delete *DeleteResponse `json:"delete,omitempty"`
	Range  *RangeResponse  `json:"range,omitempty"`
	Txn    *TxnResponse    `json:"txn,omitempty"`
} // @name ResponseOp

// RangeResponse answers a range op of a txn.
type RangeResponse struct {
	Header ResponseHeader `json:"header"`
	KVs    []KeyValue     `json:"kvs"`
	Count  int64          `json:"count" format:"int64" minimum:"0"`
	More   bool           `json:"more"`
} // @name RangeResponse

// HistoryResponse answers GET /v1/history.
type HistoryResponse struct {
	Header ResponseHeader `json:"header"`
	// The store's compact revision when the page was read: the history below it is gone.
	CompactRevision int64 `json:"compact_revision" format:"int64" minimum:"0"`
	// The events of this page, in revision order (newest first with order=descend).
	Events []WatchEvent `json:"events"`
	// Whether the window may hold events beyond this page (a page stopped early may hold none).
	More bool `json:"more"`
	// Present when more is true: pass it as page_token, with the same range, order and filters, for the next page.
	NextPageToken string `json:"next_page_token,omitempty"`
} // @name HistoryResponse

// LeaseGrantRequest is the body of POST /v1/leases.
type LeaseGrantRequest struct {
	// The lease's time to live in seconds.
	TTL int64 `json:"ttl" format:"int64" minimum:"1" example:"60"`
	// The lease ID to use, in [1, 2^53-1]; 0 or none lets the server choose.
	ID int64 `json:"id,omitempty" format:"int64" minimum:"0" maximum:"9007199254740991"`
} // @name LeaseGrantRequest

// LeaseResponse answers a grant or a keep-alive.
type LeaseResponse struct {
	Header ResponseHeader `json:"header"`
	// The lease ID, in [1, 2^53-1].
	ID int64 `json:"id" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
	// The lease's time to live in seconds, now full again.
	TTL int64 `json:"ttl" format:"int64" example:"60"`
} // @name LeaseResponse

// LeaseList answers GET /v1/leases.
type LeaseList struct {
	Header ResponseHeader `json:"header"`
	// The leases of this page, by ascending ID.
	Leases []LeaseListItem `json:"leases"`
	// Whether leases beyond this page remain.
	More bool `json:"more"`
	// Present when more is true: pass it as page_token for the next page.
	NextPageToken string `json:"next_page_token,omitempty"`
} // @name LeaseList

// LeaseListItem is one lease of a list.
type LeaseListItem struct {
	ID int64 `json:"id" format:"int64" minimum:"1" maximum:"9007199254740991"`
} // @name LeaseListItem

// LeaseTimeToLive answers GET /v1/leases/{id}.
type LeaseTimeToLive struct {
	Header ResponseHeader `json:"header"`
	ID     int64          `json:"id" format:"int64" minimum:"1" maximum:"9007199254740991"`
	// Seconds left before the lease expires.
	TTL int64 `json:"ttl" format:"int64"`
	// The TTL the lease was granted with.
	GrantedTTL int64 `json:"granted_ttl" format:"int64"`
	// With keys=true: the attached keys the caller may read, when all are valid UTF-8.
	Keys []string `json:"keys,omitempty"`
	// With keys=true, when any of those keys is not valid UTF-8: all of them in base64 instead of keys.
	KeysBase64 []string `json:"keys_base64,omitempty" format:"byte"`
	// With keys=true: true when the lease holds keys the caller may not read, left out of keys; absent otherwise.
	KeysHidden bool `json:"keys_hidden,omitempty"`
} // @name LeaseTimeToLive

// HeaderResponse answers a revoke or a compaction.
type HeaderResponse struct {
	Header ResponseHeader `json:"header"`
} // @name HeaderResponse

// CompactRequest is the body of POST /v1/compact.
type CompactRequest struct {
	// Compact the history below this revision; it must be above the compact revision and at most the current one.
	Revision int64 `json:"revision" format:"int64" minimum:"1" example:"100"`
	// Wait until the compaction is done on disk.
	Physical bool `json:"physical,omitempty"`
} // @name CompactRequest

// Status answers GET /v1/status.
type Status struct {
	Header          ResponseHeader `json:"header"`
	Version         string         `json:"version" example:"1.0.0"`
	Revision        int64          `json:"revision" format:"int64"`
	CompactRevision int64          `json:"compact_revision" format:"int64"`
	// Size of the backend file in bytes.
	DBSize int64 `json:"db_size" format:"int64"`
	// Size of the backend less its free pages.
	DBSizeInUse int64         `json:"db_size_in_use" format:"int64"`
	Keys        int64         `json:"keys" format:"int64"`
	Leases      int64         `json:"leases" format:"int64"`
	Watchers    WatcherCounts `json:"watchers"`
	// Active alarms.
	Alarms []string `json:"alarms" enums:"NOSPACE"`
} // @name Status

// WatcherCounts counts watchers by group.
type WatcherCounts struct {
	Synced   int64 `json:"synced" format:"int64"`
	Unsynced int64 `json:"unsynced" format:"int64"`
	Victims  int64 `json:"victims" format:"int64"`
} // @name WatcherCounts

// DefragResponse answers POST /v1/defrag.
type DefragResponse struct {
	Header ResponseHeader `json:"header"`
	// Size of the backend file after the defragmentation.
	DBSize int64 `json:"db_size" format:"int64"`
} // @name DefragResponse

// Alarms answers GET and DELETE /v1/alarms.
type Alarms struct {
	Header ResponseHeader `json:"header"`
	Alarms []string       `json:"alarms" enums:"NOSPACE"`
} // @name Alarms

// Health answers GET /health.
type Health struct {
	Health bool `json:"health"`
	// Why the server is not healthy: shutting down, backend failed, backend unavailable (with what failed, e.g. "backend unavailable: etcd cannot serve: of 3 members, 3 unreachable (...)"), or ALARM NOSPACE.
	Reason string `json:"reason,omitempty"`
} // @name Health

// AuthStatus answers GET /v1/auth/status, enable and disable.
type AuthStatus struct {
	Enabled bool `json:"enabled"`
} // @name AuthStatus

// Credentials is a user's name and password.
type Credentials struct {
	Name     string `json:"name" example:"alice"`
	Password string `json:"password" example:"s3cret"`
} // @name Credentials

// Token answers POST /v1/auth/token.
type Token struct {
	// Send it as "Authorization: Bearer <token>", or as the access_token query parameter where a header cannot be set.
	Token string `json:"token"`
	// Seconds until the token expires.
	TTL int64 `json:"ttl" format:"int64" example:"300"`
} // @name Token

// UserList answers GET /v1/auth/users.
type UserList struct {
	Users []string `json:"users"`
} // @name UserList

// User is a user and the roles granted to it.
type User struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
} // @name User

// Password is the body of PUT /v1/auth/users/{name}/password.
type Password struct {
	Password string `json:"password"`
} // @name Password

// RoleList answers GET /v1/auth/roles.
type RoleList struct {
	Roles []string `json:"roles"`
} // @name RoleList

// RoleName is the body of POST /v1/auth/roles.
type RoleName struct {
	Name string `json:"name" example:"readers"`
} // @name RoleName

// Role is a role and its permissions.
type Role struct {
	Name        string       `json:"name"`
	Permissions []Permission `json:"permissions"`
} // @name Role

// Permission is a permission of a role.
type Permission struct {
	// The key, or the start of the range [key, range_end).
	Key       string `json:"key,omitempty"`
	KeyBase64 string `json:"key_base64,omitempty" format:"byte"`
	// The end of the range; absent for a single key, and a single zero byte for every key >= key.
	RangeEnd       string `json:"range_end,omitempty"`
	RangeEndBase64 string `json:"range_end_base64,omitempty" format:"byte"`
	Type           string `json:"type" enums:"read,write,readwrite"`
} // @name Permission

// PermissionRequest is the body of POST /v1/auth/roles/{name}/permissions.
type PermissionRequest struct {
	Selector
	Type string `json:"type" enums:"read,write,readwrite" example:"readwrite"`
} // @name PermissionRequest

// Empty answers the auth changes that have nothing to say.
type Empty struct{} // @name Empty

// WatchEvent is one change in a watch message or a history page.
type WatchEvent struct {
	Type string `json:"type" enums:"put,delete"`
	// The key after the change; a delete's carries the key and the delete's mod_revision, with no value.
	KV KeyValue `json:"kv"`
	// With prev_kv=true: the key before the change, if it existed.
	PrevKV *KeyValue `json:"prev_kv,omitempty"`
} // @name WatchEvent
