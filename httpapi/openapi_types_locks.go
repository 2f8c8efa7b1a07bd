package httpapi

// The wire of locks and elections, for the OpenAPI document; see
// openapi_types.go.

// lockRequestDoc is the body of POST /v1/locks/{name}.
type lockRequestDoc struct {
	// The lease that is to hold the lock; the lock is released when it expires or is revoked.
	Lease int64 `json:"lease" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
} // @name LockRequest

// lockResponseDoc answers POST /v1/locks/{name}.
type lockResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// The owner key, name/<lease ID in lowercase hex>: pass it to DELETE /v1/locks/{name} to release the lock. key_base64 instead when the name is not valid UTF-8.
	Key       string `json:"key,omitempty" example:"jobs/4d2"`
	KeyBase64 string `json:"key_base64,omitempty" format:"byte"`
} // @name LockResponse

// campaignRequestDoc is the body of POST /v1/elections/{name}/campaign.
type campaignRequestDoc struct {
	// The candidate's lease; the candidacy ends when it expires or is revoked.
	Lease int64 `json:"lease" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
	// The value the leader proclaims (or value_base64); none is the empty value.
	Value       string `json:"value,omitempty" example:"10.0.0.7:8080"`
	ValueBase64 string `json:"value_base64,omitempty" format:"byte"`
} // @name CampaignRequest

// leaderKeyDoc identifies a candidacy that won.
type leaderKeyDoc struct {
	// The election's name (or name_base64); optional in requests, where it must be the name in the path.
	Name       string `json:"name,omitempty" example:"db-primary"`
	NameBase64 string `json:"name_base64,omitempty" format:"byte"`
	// The candidate's key, name/<lease ID in lowercase hex> (or key_base64).
	Key       string `json:"key,omitempty" example:"db-primary/4d2"`
	KeyBase64 string `json:"key_base64,omitempty" format:"byte"`
	// The key's create revision: the candidacy, which a key put again later is not.
	Revision int64 `json:"revision" format:"int64" minimum:"1" example:"42"`
	// The candidate's lease.
	Lease int64 `json:"lease" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
} // @name LeaderKey

// campaignResponseDoc answers POST /v1/elections/{name}/campaign.
type campaignResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// The candidacy that leads: what proclaim and resign take.
	Leader leaderKeyDoc `json:"leader"`
} // @name CampaignResponse

// proclaimRequestDoc is the body of POST /v1/elections/{name}/proclaim.
type proclaimRequestDoc struct {
	// The leader, as campaign answered it.
	Leader leaderKeyDoc `json:"leader"`
	// The new value (or value_base64); none is the empty value.
	Value       string `json:"value,omitempty" example:"10.0.0.8:8080"`
	ValueBase64 string `json:"value_base64,omitempty" format:"byte"`
} // @name ProclaimRequest

// resignRequestDoc is the body of POST /v1/elections/{name}/resign.
type resignRequestDoc struct {
	// The leader, as campaign answered it.
	Leader leaderKeyDoc `json:"leader"`
} // @name ResignRequest

// observeMessageDoc is the JSON of one observe message: the data of an
// SSE message.
type observeMessageDoc struct {
	// Every message but canceled: the revision of the change (for compacted, the store's revision).
	Header *responseHeaderDoc `json:"header,omitempty"`
	// The default message: the leader's key and value from header.revision on.
	KV *keyValueDoc `json:"kv,omitempty"`
	// compacted: the compact revision; the history needed to resume is gone and the stream ends.
	CompactRevision int64 `json:"compact_revision,omitempty" format:"int64"`
	// canceled: why the server ended the stream (permission denied, shutting down).
	Reason string `json:"reason,omitempty"`
} // @name ObserveMessage
