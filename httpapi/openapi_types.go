package httpapi

// The types of these files (openapi_types*.go, txn_request.go) are the
// wire, declared once: handlers decode request bodies into them and
// encode answers from them, and swag documents them (each names its
// schema with an @name comment); the end-to-end tests check every answer
// the server gives against the document made from them. The answers on
// the hot paths (reads, lists, watch events, txn results) are appended by
// hand (wire.go) for speed; wire_test.go decodes what they write into
// these types and checks no field is lost or added.
//
// A field without omitempty is always present; a field with it may be
// left out. A key-like field and its *_base64 twin are both optional in
// the schema, but exactly one of a key and its twin is present, and never
// both of any pair: JSON Schema cannot say that without making clients
// awkward, so the descriptions do.

// responseHeaderDoc is the "header" of every answer that reflects the store.
type responseHeaderDoc struct {
	// The store's current revision when the request was served (also for a read at a past revision); the X-Revision header carries the same number.
	Revision int64 `json:"revision" format:"int64" minimum:"1" example:"42"`
} // @name ResponseHeader

// keyValueDoc is a key with its value and metadata.
type keyValueDoc struct {
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

// errorDoc is the body of every error answer. Its schema is not named
// Error, a name that many languages' clients would shadow a built-in with.
type errorDoc struct {
	Error errorBodyDoc `json:"error"`
} // @name ErrorResponse

// errorBodyDoc is the error object.
type errorBodyDoc struct {
	// The error's code; the HTTP status says its class. not_found and method_not_allowed answer a path or method the API does not have, internal an unexpected failure.
	Code string `json:"code" enums:"invalid_argument,future_revision,unauthenticated,permission_denied,not_found,key_not_found,lease_not_found,user_not_found,role_not_found,permission_not_found,method_not_allowed,already_exists,compacted,precondition_failed,patch_failed,request_too_large,unsupported_media_type,too_many_requests,internal,unavailable,no_space,lock_timeout,no_leader,not_leader,stream_not_found,watch_not_found,not_supported" example:"key_not_found"`
	// Human-readable text; it never names other users' keys or permissions.
	Message string `json:"message" example:"key not found"`
	// With compacted: the store's compact revision.
	CompactRevision int64 `json:"compact_revision,omitempty" format:"int64"`
	// With key_not_found and precondition_failed: the store's current revision.
	Revision int64 `json:"revision,omitempty" format:"int64"`
	// With precondition_failed: the key as it is now, if it exists.
	KV *keyValueDoc `json:"kv,omitempty"`
	// With an answer too large: the bound on its key and value bytes.
	MaxResponseBytes int64 `json:"max_response_bytes,omitempty" format:"int64"`
	// With a txn range without a limit that matched too many keys: the bound.
	MaxKeys int64 `json:"max_keys,omitempty" format:"int64"`
} // @name ErrorBody

// getResponseDoc answers GET /v1/kv/{key}.
type getResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	KV     keyValueDoc       `json:"kv"`
} // @name GetResponse

// putResponseDoc answers PUT /v1/kv/{key}.
type putResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// The key before the put, with prev_kv=true when it existed.
	PrevKV *keyValueDoc `json:"prev_kv,omitempty"`
	// With ttl: the ID of the key's own lease, granted by the put.
	Lease int64 `json:"lease,omitempty" format:"int64" minimum:"1" maximum:"9007199254740991"`
} // @name PutResponse

// deleteResponseDoc answers a delete.
type deleteResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// How many keys were deleted. Deleting nothing makes no revision.
	Deleted int64 `json:"deleted" format:"int64" minimum:"0"`
	// With prev_kv=true: the deleted keys as they were.
	PrevKVs []keyValueDoc `json:"prev_kvs,omitempty"`
} // @name DeleteResponse

// listResponseDoc answers GET /v1/kv.
type listResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// The keys of this page (empty with count_only=true; without values with keys_only=true).
	KVs []keyValueDoc `json:"kvs"`
	// How many keys the whole range holds at the revision read, over every page.
	Count int64 `json:"count" format:"int64" minimum:"0"`
	// Whether keys beyond this page remain.
	More bool `json:"more"`
	// Present when more is true and the order is key-ascending: pass it as page_token to read the next page at this page's revision.
	NextPageToken string `json:"next_page_token,omitempty"`
} // @name ListResponse

// txnResponseDoc answers POST /v1/txn (and a nested txn op).
type txnResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// Whether every compare held, so that success ran rather than failure.
	Succeeded bool `json:"succeeded"`
	// One answer per op of the branch that ran, in order.
	Responses []responseOpDoc `json:"responses"`
} // @name TxnResponse

// responseOpDoc is the answer to one txn op: the field of the op's kind.
type responseOpDoc struct {
	Put    *putResponseDoc    `json:"put,omitempty"`
	Delete *deleteResponseDoc `json:"delete,omitempty"`
	Range  *rangeResponseDoc  `json:"range,omitempty"`
	Txn    *txnResponseDoc    `json:"txn,omitempty"`
} // @name ResponseOp

// rangeResponseDoc answers a range op of a txn.
type rangeResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	KVs    []keyValueDoc     `json:"kvs"`
	Count  int64             `json:"count" format:"int64" minimum:"0"`
	More   bool              `json:"more"`
} // @name RangeResponse

// historyResponseDoc answers GET /v1/history.
type historyResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// The store's compact revision when the page was read: the history below it is gone.
	CompactRevision int64 `json:"compact_revision" format:"int64" minimum:"0"`
	// The events of this page, in revision order (newest first with order=descend).
	Events []eventDoc `json:"events"`
	// Whether the window may hold events beyond this page (a page stopped early may hold none).
	More bool `json:"more"`
	// Present when more is true: pass it as page_token, with the same range, order and filters, for the next page.
	NextPageToken string `json:"next_page_token,omitempty"`
} // @name HistoryResponse

// leaseGrantRequestDoc is the body of POST /v1/leases.
type leaseGrantRequestDoc struct {
	// The lease's time to live in seconds.
	TTL int64 `json:"ttl" format:"int64" minimum:"1" example:"60"`
	// The lease ID to use, in [1, 2^53-1]; 0 or none lets the server choose.
	ID int64 `json:"id,omitempty" format:"int64" minimum:"0" maximum:"9007199254740991"`
} // @name LeaseGrantRequest

// leaseResponseDoc answers a grant or a keep-alive.
type leaseResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// The lease ID, in [1, 2^53-1].
	ID int64 `json:"id" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
	// The lease's time to live in seconds, now full again.
	TTL int64 `json:"ttl" format:"int64" example:"60"`
} // @name LeaseResponse

// leaseListDoc answers GET /v1/leases.
type leaseListDoc struct {
	Header responseHeaderDoc `json:"header"`
	// The leases of this page, by ascending ID.
	Leases []leaseItemDoc `json:"leases"`
	// Whether leases beyond this page remain.
	More bool `json:"more"`
	// Present when more is true: pass it as page_token for the next page.
	NextPageToken string `json:"next_page_token,omitempty"`
} // @name LeaseList

// leaseItemDoc is one lease of a list.
type leaseItemDoc struct {
	ID int64 `json:"id" format:"int64" minimum:"1" maximum:"9007199254740991"`
} // @name LeaseListItem

// leaseTimeToLiveDoc answers GET /v1/leases/{id}.
type leaseTimeToLiveDoc struct {
	Header responseHeaderDoc `json:"header"`
	ID     int64             `json:"id" format:"int64" minimum:"1" maximum:"9007199254740991"`
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

// headerResponseDoc answers a revoke or a compaction.
type headerResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
} // @name HeaderResponse

// compactRequestDoc is the body of POST /v1/compact.
type compactRequestDoc struct {
	// Compact the history below this revision; it must be above the compact revision and at most the current one.
	Revision int64 `json:"revision" format:"int64" minimum:"1" example:"100"`
	// Wait until the compaction is done on disk.
	Physical bool `json:"physical,omitempty"`
} // @name CompactRequest

// statusDoc answers GET /v1/status.
type statusDoc struct {
	Header          responseHeaderDoc `json:"header"`
	Version         string            `json:"version" example:"1.0.0"`
	Revision        int64             `json:"revision" format:"int64"`
	CompactRevision int64             `json:"compact_revision" format:"int64"`
	// Size of the backend file in bytes.
	DBSize int64 `json:"db_size" format:"int64"`
	// Size of the backend less its free pages.
	DBSizeInUse int64       `json:"db_size_in_use" format:"int64"`
	Keys        int64       `json:"keys" format:"int64"`
	Leases      int64       `json:"leases" format:"int64"`
	Watchers    watchersDoc `json:"watchers"`
	// Active alarms.
	Alarms []string `json:"alarms" enums:"NOSPACE"`
} // @name Status

// watchersDoc counts watchers by group.
type watchersDoc struct {
	Synced   int64 `json:"synced" format:"int64"`
	Unsynced int64 `json:"unsynced" format:"int64"`
	Victims  int64 `json:"victims" format:"int64"`
} // @name WatcherCounts

// defragResponseDoc answers POST /v1/defrag.
type defragResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// Size of the backend file after the defragmentation.
	DBSize int64 `json:"db_size" format:"int64"`
} // @name DefragResponse

// alarmsDoc answers GET and DELETE /v1/alarms.
type alarmsDoc struct {
	Header responseHeaderDoc `json:"header"`
	Alarms []string          `json:"alarms" enums:"NOSPACE"`
} // @name Alarms

// healthDoc answers GET /health.
type healthDoc struct {
	Health bool `json:"health"`
	// Why the server is not healthy: shutting down, backend failed, backend unavailable (with what failed, e.g. "backend unavailable: etcd cannot serve: of 3 members, 3 unreachable (...)"), or ALARM NOSPACE.
	Reason string `json:"reason,omitempty"`
} // @name Health

// authStatusDoc answers GET /v1/auth/status, enable and disable.
type authStatusDoc struct {
	Enabled bool `json:"enabled"`
} // @name AuthStatus

// credentialsDoc is a user's name and password.
type credentialsDoc struct {
	Name     string `json:"name" example:"alice"`
	Password string `json:"password" example:"s3cret"`
} // @name Credentials

// tokenDoc answers POST /v1/auth/token.
type tokenDoc struct {
	// Send it as "Authorization: Bearer <token>", or as the access_token query parameter where a header cannot be set.
	Token string `json:"token"`
	// Seconds until the token expires.
	TTL int64 `json:"ttl" format:"int64" example:"300"`
} // @name Token

// userListDoc answers GET /v1/auth/users.
type userListDoc struct {
	Users []string `json:"users"`
} // @name UserList

// userDoc is a user and the roles granted to it.
type userDoc struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
} // @name User

// passwordDoc is the body of PUT /v1/auth/users/{name}/password.
type passwordDoc struct {
	Password string `json:"password"`
} // @name Password

// roleListDoc answers GET /v1/auth/roles.
type roleListDoc struct {
	Roles []string `json:"roles"`
} // @name RoleList

// roleNameDoc is the body of POST /v1/auth/roles.
type roleNameDoc struct {
	Name string `json:"name" example:"readers"`
} // @name RoleName

// roleDoc is a role and its permissions.
type roleDoc struct {
	Name        string          `json:"name"`
	Permissions []permissionDoc `json:"permissions"`
} // @name Role

// permissionDoc is a permission of a role.
type permissionDoc struct {
	// The key, or the start of the range [key, range_end).
	Key       string `json:"key,omitempty"`
	KeyBase64 string `json:"key_base64,omitempty" format:"byte"`
	// The end of the range; absent for a single key, and a single zero byte for every key >= key.
	RangeEnd       string `json:"range_end,omitempty"`
	RangeEndBase64 string `json:"range_end_base64,omitempty" format:"byte"`
	Type           string `json:"type" enums:"read,write,readwrite"`
} // @name Permission

// permissionRequestDoc is the body of POST /v1/auth/roles/{name}/permissions.
type permissionRequestDoc struct {
	selector
	Type string `json:"type" enums:"read,write,readwrite" example:"readwrite"`
} // @name PermissionRequest

// emptyDoc answers the auth changes that have nothing to say.
type emptyDoc struct{} // @name Empty
